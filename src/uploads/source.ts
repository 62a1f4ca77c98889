/**
 * Any file input resolved to a {@link Source}: bytes, Blobs and streams here, on every runtime; paths
 * through the runtime's own files (`#uploads-runtime`), which know whether and how the runtime reads files.
 */
import type { Readable } from 'node:stream';
import { detect, fileOfStream, pathSource } from '#uploads-runtime';
import { bytesSource, readableSource, readerSource } from './chunks.js';
import { readSample, readWebSample } from './sniff.js';
import { blobSource, FileInputProblem, HEAD_BYTES, type Source } from './source-base.js';
import type { FileInput, FileSource } from './types.js';

export { FileInputProblem, type Source } from './source-base.js';

/** A Node Readable, by its methods: Bun's and another copy of `node:stream`'s too, with no import here. */
function isReadable(value: unknown): value is Readable {
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

/** A web `ReadableStream`, by its methods (another realm's too). */
function isWebStream(value: unknown): value is ReadableStream<Uint8Array> {
  if (typeof ReadableStream !== 'undefined' && value instanceof ReadableStream) return true;
  const candidate = value as Partial<ReadableStream> | null;
  return (
    typeof candidate === 'object' &&
    candidate !== null &&
    typeof candidate.getReader === 'function' &&
    typeof candidate.pipeThrough === 'function' &&
    typeof candidate.cancel === 'function'
  );
}

function isArrayBuffer(value: unknown): value is ArrayBuffer {
  return value instanceof ArrayBuffer || Object.prototype.toString.call(value) === '[object ArrayBuffer]';
}

function isFileSource(value: unknown): value is FileSource {
  return (
    typeof value === 'string' ||
    value instanceof URL ||
    value instanceof Uint8Array ||
    isArrayBuffer(value) ||
    isBlob(value) ||
    isWebStream(value) ||
    isReadable(value)
  );
}

/**
 * Destroys a stream the caller handed over (as the file or its `data`) when the call refuses it before
 * reading it: its file is not left open.
 */
export function discardInput(input: unknown): void {
  const data = typeof input === 'object' && input !== null && 'data' in input ? input.data : input;
  if (isWebStream(data)) {
    // A stream already locked to a reader of the caller's is theirs to cancel.
    if (!data.locked) data.cancel().catch(() => {});
    return;
  }
  if (!isReadable(data)) return;
  data.on('error', () => {});
  data.destroy();
}

const ACCEPTED_SOURCES =
  'a path, a file: URL, a Buffer, Uint8Array or ArrayBuffer, a Blob or File, or a stream (web ReadableStream or Node Readable)';
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

function bytesSourceOf(bytes: Uint8Array, label: string): Source {
  return {
    label,
    name: undefined,
    declaredType: undefined,
    size: bytes.byteLength,
    replayable: true,
    detect: () => detect(bytes),
    head: async () => bytes.subarray(0, HEAD_BYTES),
    open: () => bytesSource(bytes),
    blob: async () => new Blob([bytes as Uint8Array<ArrayBuffer>]),
    discard: () => {},
  };
}

/** `Buffer` is Node's (and Bun's) subclass of Uint8Array; named as the caller knows it. */
function bytesLabel(bytes: Uint8Array): string {
  const buffer = (globalThis as { Buffer?: { isBuffer(value: unknown): boolean } }).Buffer;
  return buffer?.isBuffer(bytes) ? 'the Buffer' : 'the Uint8Array';
}

async function streamSource(stream: Readable, signal: AbortSignal | undefined): Promise<Source> {
  // A stream the caller handed over is ours to end when the file is refused: its file is not left open.
  const discard = () => {
    stream.on('error', () => {});
    stream.destroy();
  };
  // The call may be stopped before the first bytes are read (while the stream's file is looked up):
  // the stream is released then, as in the read itself, not once that look-up is over.
  signal?.addEventListener('abort', discard, { once: true });
  try {
    let file: Awaited<ReturnType<typeof fileOfStream>>;
    try {
      file = await fileOfStream(stream);
    } finally {
      signal?.removeEventListener('abort', discard);
    }
    const label = file?.name ?? 'the stream';
    const sample = await readSample(stream, signal).catch((error: unknown) => {
      if (signal?.aborted) throw error;
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
      detect: () => detect(sample.head),
      head: async () => sample.head.subarray(0, HEAD_BYTES),
      // A stream that ended within the sample was read whole; it cannot give its bytes again.
      open: () => (sample.ended ? bytesSource(sample.head) : readableSource(stream)),
      blob: undefined,
      discard,
    };
  } catch (error) {
    discard();
    throw error;
  }
}

/** A web stream: its first chunks read to detect the format, then given again first. Read once. */
async function webStreamSource(
  stream: ReadableStream<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<Source> {
  const label = 'the stream';
  if (stream.locked) {
    throw new FileInputProblem(`${label} cannot be read: it is locked to a reader already`);
  }
  const reader = stream.getReader();
  const discard = () => {
    reader.cancel().catch(() => {});
  };
  try {
    const sample = await readWebSample(reader, signal).catch((error: unknown) => {
      if (signal?.aborted) throw error;
      throw new FileInputProblem(`${label} cannot be read: ${(error as Error).message}`, ['file'], {
        cause: error,
      });
    });
    return {
      label,
      name: undefined,
      declaredType: undefined,
      size: sample.ended ? sample.head.length : undefined,
      replayable: false,
      detect: () => detect(sample.head),
      head: async () => sample.head.subarray(0, HEAD_BYTES),
      open: () => (sample.ended ? bytesSource(sample.head) : readerSource(reader, sample.chunks)),
      blob: undefined,
      discard,
    };
  } catch (error) {
    discard();
    throw error;
  }
}

/**
 * Resolves any {@link FileSource} to a {@link Source}; reads nothing of a path yet but its metadata. A
 * stream's first bytes are read here: `signal` (the call's) ends that read and releases the stream.
 */
export async function resolveSource(data: FileSource, signal?: AbortSignal | undefined): Promise<Source> {
  if (typeof data === 'string' || data instanceof URL) {
    if (typeof data === 'string' && data.trim() === '')
      throw new FileInputProblem('file must not be an empty path');
    return pathSource(data);
  }
  if (data instanceof Uint8Array) return bytesSourceOf(data, bytesLabel(data));
  if (isArrayBuffer(data)) return bytesSourceOf(new Uint8Array(data), 'the ArrayBuffer');
  if (isBlob(data)) return blobSource(data, detect);
  if (isWebStream(data)) return webStreamSource(data, signal);
  // A Node Readable, by the methods FileSource describes it with.
  return streamSource(data as Readable, signal);
}
