/**
 * How files are read on Node (package.json `imports`: `#uploads-runtime` under the `node` condition):
 * paths through `node:fs`, an `fs.ReadStream`'s file and size, and formats by file-type. The code that
 * reads files (and node:fs/promises with it) is loaded by the first upload that needs it, not at
 * import.
 */
import type { Readable } from 'node:stream';
import type { DetectedType } from './formats.js';
import type { Source } from './source-base.js';

const files = () => import('./node-files.js');

/** The format of bytes or a Blob, by file-type's signatures. */
export async function detect(sample: Uint8Array | Blob): Promise<DetectedType | undefined> {
  return (await files()).nodeDetect(sample);
}

/** A file on disk, by path or `file:` URL. */
export async function pathSource(data: string | URL): Promise<Source> {
  return (await files()).nodePathSource(data);
}

/** An `fs.ReadStream`'s file and byte range, for its name and size; undefined once reading has begun. */
export async function fileOfStream(stream: Readable): Promise<{ name: string; size: number } | undefined> {
  return (await files()).fileOfReadStream(stream);
}
