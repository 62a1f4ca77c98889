/**
 * Files on Node: a path or `file:` URL read with node:fs, and the name and size of an `fs.ReadStream`.
 * Reached only from Node's runtime file (`runtime-node.ts`).
 */
import { createReadStream, openAsBlob, ReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { CHUNK_BYTES, readableSource } from './chunks.js';
import type { DetectedType } from './formats.js';
import { FileInputProblem, fileUrlOf, HEAD_BYTES, type Source } from './source-base.js';

/** file-type, loaded on first use: importing the SDK must stay cheap. */
const fileType = () => import('file-type');

/** The format of bytes or a Blob, by file-type's signatures. */
export async function nodeDetect(sample: Uint8Array | Blob): Promise<DetectedType | undefined> {
  const { fileTypeFromBlob, fileTypeFromBuffer } = await fileType();
  return sample instanceof Uint8Array ? fileTypeFromBuffer(sample) : fileTypeFromBlob(sample);
}

/** The file a path or `file:` URL names, resolved against the working directory. */
function pathOf(data: string | URL): string {
  const url = fileUrlOf(data);
  if (!url) return resolve(data as string);
  try {
    return fileURLToPath(url);
  } catch (error) {
    throw new FileInputProblem(`${url.href} is not a local file: ${(error as Error).message}`, ['file'], {
      cause: error,
    });
  }
}

/** A file that cannot be read, said plainly (never a bare ENOENT). */
function fileProblem(label: string, path: string, error: unknown): FileInputProblem {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR') {
    return new FileInputProblem(`${label} was not found (no file at ${path})`, ['file'], { cause: error });
  }
  const reason = code === 'EACCES' || code === 'EPERM' ? 'permission denied' : (error as Error).message;
  return new FileInputProblem(`${label} cannot be read (${reason})`, ['file'], { cause: error });
}

async function readHead(path: string): Promise<Uint8Array> {
  const handle = await open(path, 'r');
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(HEAD_BYTES), 0, HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A file on disk: its size now, its format from its own bytes; read only when a body is. */
export async function nodePathSource(data: string | URL): Promise<Source> {
  const path = pathOf(data);
  const name = basename(path);
  const stats = await stat(path).catch((error: unknown) => {
    throw fileProblem(name, path, error);
  });
  if (!stats.isFile()) {
    throw new FileInputProblem(
      `${name} is not a file (${stats.isDirectory() ? 'a directory' : 'not a regular file'})`,
    );
  }
  const size = stats.size;
  const guard = <T>(read: () => Promise<T>) =>
    read().catch((error: unknown) => {
      throw fileProblem(name, path, error);
    });
  return {
    label: name,
    name,
    declaredType: undefined,
    size,
    replayable: true,
    detect: () => guard(async () => (await fileType()).fileTypeFromFile(path)),
    head: () => guard(() => readHead(path)),
    // `end` pins the length to what was checked: a file that grew since goes out as it was measured.
    open: () =>
      readableSource(createReadStream(path, { start: 0, end: size - 1, highWaterMark: CHUNK_BYTES })),
    // A Blob backed by the file, read as the request goes out (fetch transport on Node).
    blob: () => guard(() => openAsBlob(path)).then((blob) => blob.slice(0, size)),
    discard: () => {},
  };
}

/** An `fs.ReadStream`'s file and byte range, for its name and size; undefined once reading has begun. */
export async function fileOfReadStream(
  stream: Readable,
): Promise<{ name: string; size: number } | undefined> {
  if (!(stream instanceof ReadStream)) return undefined;
  const raw = stream.path as string | Buffer | undefined;
  if (raw === undefined) return undefined;
  const path = typeof raw === 'string' ? raw : raw.toString();
  const name = basename(path);
  if (stream.bytesRead > 0) return { name, size: Number.NaN };
  const stats = await stat(path).catch((error: unknown) => {
    throw fileProblem(name, resolve(path), error);
  });
  if (!stats.isFile()) return { name, size: Number.NaN };
  const range = stream as ReadStream & { start?: number; end?: number };
  const start = range.start ?? 0;
  const end = range.end === undefined || range.end === Number.POSITIVE_INFINITY ? stats.size : range.end + 1;
  return { name, size: Math.max(0, Math.min(end, stats.size) - start) };
}
