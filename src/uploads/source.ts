import { createReadStream, ReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeWebReadableStream } from 'node:stream/web';
import { fileURLToPath } from 'node:url';
import type { DetectedType } from './formats.js';
import { readSample } from './sniff.js';
import type { FileInput, FileSource } from './types.js';
import { bytesSource, CHUNK_BYTES, type ChunkSource, readableSource } from './upload-stream.js';

/** A problem with the input itself, worded for the caller; `prepareUpload` turns it into an OAValidationError. */
export class FileInputProblem extends Error {
  constructor(
    message: string,
    readonly path: (string | number)[] = ['file'],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A file input, resolved: where its bytes are, what it is called, and how to read it. */
export interface Source {
  /** Names the file in messages: its name, or "the Buffer", "the stream" ... */
  label: string;
  /** The file's own name (base name of a path, a File's name), if it has one. */
  name: string | undefined;
  /** The declared type (a Blob's `type`), a hint only. */
  declaredType: string | undefined;
  /** Bytes, when known before reading. */
  size: number | undefined;
  replayable: boolean;
  /** The bytes' signature, by file-type. */
  detect(): Promise<DetectedType | undefined>;
  /** The first bytes, to say why detection failed (text?). */
  head(): Promise<Uint8Array>;
  open: ChunkSource;
  /** Releases what was taken from the caller when the file is refused (destroys a stream). */
  discard(): void;
}

const HEAD_BYTES = 512;

/** file-type, loaded on first use: importing the SDK must stay cheap. */
const fileType = () => import('file-type');

function isReadable(value: unknown): value is Readable {
  if (value instanceof Readable) return true;
  const candidate = value as Partial<Readable> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.read === 'function' &&
    typeof candidate.unshift === 'function' &&
    typeof candidate.on === 'function'
  );
}

function isBlob(value: unknown): value is Blob {
  if (typeof Blob !== 'undefined' && value instanceof Blob) return true;
  const candidate = value as Partial<Blob> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.size === 'number' &&
    typeof candidate.stream === 'function' &&
    typeof candidate.slice === 'function' &&
    typeof candidate.arrayBuffer === 'function'
  );
}

function isFileSource(value: unknown): value is FileSource {
  return (
    typeof value === 'string' ||
    value instanceof URL ||
    value instanceof Uint8Array ||
    isBlob(value) ||
    isReadable(value)
  );
}

/**
 * Destroys a stream the caller handed over (as the file or its `data`) when the call refuses it before
 * reading it: its file is not left open.
 */
export function discardInput(input: unknown): void {
  const data = typeof input === 'object' && input !== null && 'data' in input ? input.data : input;
  if (!isReadable(data)) return;
  data.on('error', () => {});
  data.destroy();
}

const ACCEPTED_SOURCES = 'a path, a file: URL, a Buffer or Uint8Array, a Blob or File, or a Readable';
const ACCEPTED_INPUTS = `${ACCEPTED_SOURCES.replace(', or ', ', ')}, or { data, filename?, contentType? }`;

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'no prototype'})`;
  return typeof value;
}

/** Splits `{ data, filename, contentType }` and checks that `data` is something the SDK can read. */
export function unwrapInput(input: FileInput): {
  data: FileSource;
  filename: string | undefined;
  contentType: string | undefined;
} {
  if (isFileSource(input)) return { data: input, filename: undefined, contentType: undefined };
  if (typeof input === 'object' && input !== null && 'data' in input) {
    const { data, filename, contentType } = input;
    if (!isFileSource(data)) {
      throw new FileInputProblem(`file.data must be ${ACCEPTED_SOURCES}; got ${describeValue(data)}`, [
        'file',
        'data',
      ]);
    }
    if (filename !== undefined && typeof filename !== 'string') {
      throw new FileInputProblem('file.filename must be a string', ['file', 'filename']);
    }
    if (contentType !== undefined && typeof contentType !== 'string') {
      throw new FileInputProblem('file.contentType must be a string', ['file', 'contentType']);
    }
    return { data, filename, contentType };
  }
  throw new FileInputProblem(`file must be ${ACCEPTED_INPUTS}; got ${describeValue(input)}`);
}

function pathOf(data: string | URL): string {
  const isUrl = data instanceof URL || /^file:/i.test(data);
  if (!isUrl) return resolve(data as string);
  let url: URL;
  try {
    url = data instanceof URL ? data : new URL(data);
  } catch (error) {
    throw new FileInputProblem(`${String(data)} is not a valid file: URL`, ['file'], { cause: error });
  }
  if (url.protocol !== 'file:') {
    throw new FileInputProblem(
      `only file: URLs can be uploaded; got a ${url.protocol} URL (download it first)`,
    );
  }
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

async function pathSource(path: string): Promise<Source> {
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
    discard: () => {},
  };
}

function bytesSourceOf(bytes: Uint8Array): Source {
  const label = Buffer.isBuffer(bytes) ? 'the Buffer' : 'the Uint8Array';
  return {
    label,
    name: undefined,
    declaredType: undefined,
    size: bytes.byteLength,
    replayable: true,
    detect: async () => (await fileType()).fileTypeFromBuffer(bytes),
    head: async () => bytes.subarray(0, HEAD_BYTES),
    open: () => bytesSource(bytes),
    discard: () => {},
  };
}

function blobSource(blob: Blob): Source {
  const name =
    typeof (blob as File).name === 'string' && (blob as File).name !== '' ? (blob as File).name : undefined;
  return {
    label: name ?? ((blob as File).name === undefined ? 'the Blob' : 'the File'),
    name,
    declaredType: blob.type || undefined,
    size: blob.size,
    replayable: true,
    detect: async () => (await fileType()).fileTypeFromBlob(blob),
    head: async () => new Uint8Array(await blob.slice(0, HEAD_BYTES).arrayBuffer()),
    open: () => readableSource(Readable.fromWeb(blob.stream() as NodeWebReadableStream<Uint8Array>)),
    discard: () => {},
  };
}

/** An `fs.ReadStream`'s file and byte range, for its name and size; undefined once reading has begun. */
async function fileOfReadStream(stream: Readable): Promise<{ name: string; size: number } | undefined> {
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

async function streamSource(stream: Readable): Promise<Source> {
  // A stream the caller handed over is ours to end when the file is refused: its file is not left open.
  const discard = () => {
    stream.on('error', () => {});
    stream.destroy();
  };
  try {
    const file = await fileOfReadStream(stream);
    const label = file?.name ?? 'the stream';
    const sample = await readSample(stream).catch((error: unknown) => {
      throw new FileInputProblem(`${label} cannot be read: ${(error as Error).message}`, ['file'], {
        cause: error,
      });
    });
    const knownSize = file !== undefined && Number.isFinite(file.size) ? file.size : undefined;
    const size = sample.ended ? sample.head.length : knownSize;
    return {
      label,
      name: file?.name,
      declaredType: undefined,
      size,
      replayable: false,
      detect: async () => (await fileType()).fileTypeFromBuffer(sample.head),
      head: async () => sample.head.subarray(0, HEAD_BYTES),
      // A stream that ended within the sample was read whole; it cannot give its bytes again.
      open: () => (sample.ended ? bytesSource(sample.head) : readableSource(stream)),
      discard,
    };
  } catch (error) {
    discard();
    throw error;
  }
}

/** Resolves any {@link FileSource} to a {@link Source}; reads nothing of a path yet but its metadata. */
export async function resolveSource(data: FileSource): Promise<Source> {
  if (typeof data === 'string' || data instanceof URL) {
    if (typeof data === 'string' && data.trim() === '')
      throw new FileInputProblem('file must not be an empty path');
    return pathSource(pathOf(data));
  }
  if (data instanceof Uint8Array) return bytesSourceOf(data);
  if (isBlob(data)) return blobSource(data);
  return streamSource(data);
}
