/**
 * How files are read off Node (Bun, Deno, Workers, edge runtimes, browsers; package.json `imports`:
 * `#uploads-runtime`): paths through `Bun.file` or `Deno`, refused elsewhere, and formats by the SDK's
 * own signatures. A bundle for workerd takes `runtime-workerd.ts`, the same without Bun's and Deno's
 * files.
 */
import type { Readable } from 'node:stream';

// file-type's tokenizer pulls Node-only packages into a Worker bundle.
export { detectWeb as detect } from './signatures.js';
export { webPathSource as pathSource } from './web-files.js';
export { sha256 } from './web-sha256.js';

/** Only Node's fs.ReadStream names its file; Bun's copy of it is not worth a file system call here. */
export async function fileOfStream(_stream: Readable): Promise<{ name: string; size: number } | undefined> {
  return undefined;
}
