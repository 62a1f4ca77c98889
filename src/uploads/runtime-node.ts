/**
 * How files are read on Node (package.json `imports`: `#uploads-runtime` under the `node` condition):
 * paths through `node:fs`, an `fs.ReadStream`'s file and size, formats by file-type, and the SHA-256
 * behind the reuse of uploads (`node:crypto`, fed as the parts come, so a file is hashed without
 * holding it). The code that reads files (and node:fs/promises with it) is loaded by the first upload
 * that needs it, and `node:crypto` by the first hash, not at import: loading them costs a few
 * milliseconds of the package's cold import, for a capability only uploads use.
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

/** A SHA-256 in progress: parts in, then the hex digest (64 lowercase hex digits) once. */
export function sha256(): { update(bytes: Uint8Array): void; digest(): Promise<string> } {
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
  return {
    update: (bytes) => {
      hash.update(bytes);
    },
    digest: async () => hash.digest('hex'),
  };
}
