/**
 * How files are read on Cloudflare's workerd (the `workerd` condition, which only workerd's bundlers
 * set): as off Node, without Bun's and Deno's files, which on workerd could never be read: a path is
 * refused as `runtime-web.ts` refuses it where there is no file system.
 */
import type { Readable } from 'node:stream';

export { detectWeb as detect } from './signatures.js';
export { filelessPathSource as pathSource } from './web-files.js';
export { sha256 } from './web-sha256.js';

/** Only Node's fs.ReadStream names its file. */
export async function fileOfStream(_stream: Readable): Promise<{ name: string; size: number } | undefined> {
  return undefined;
}
