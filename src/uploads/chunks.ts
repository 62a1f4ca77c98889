/**
 * A file's bytes as chunks, whatever holds them (memory, a Blob, a web stream, a Node Readable): the
 * one reading interface both multipart bodies use. No Node built-in here: it runs on every runtime.
 */
import type { Readable } from 'node:stream';

/** The bytes of one attempt, open. */
export interface OpenSource {
  /** The next chunk (Buffer, Uint8Array or string). */
  next(): Promise<IteratorResult<unknown>> | IteratorResult<unknown>;
  /** Ends the source early (closes a file, cancels a Blob's stream); safe to call more than once. */
  close(): void;
}

/** Opens the source; called on the first read, so nothing is opened for a body that is never sent. */
export type ChunkSource = () => OpenSource;

/** Chunks of at most this size: big bytes go out in slices, so progress moves and nothing is copied. */
export const CHUNK_BYTES = 64 * 1024;

const encoder = new TextEncoder();

/** A stream's chunk as bytes, without copying. */
export function toBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return encoder.encode(chunk);
  throw new TypeError(`the file's stream gave a ${typeof chunk} chunk, not bytes`);
}

/** `parts` as one array (no Buffer: the runtime may have none). */
export function concatBytes(parts: readonly Uint8Array[], total?: number): Uint8Array {
  const bytes = new Uint8Array(total ?? parts.reduce((sum, part) => sum + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  return bytes;
}

/** Slices of `bytes`, views on the same memory. */
export function* slices(bytes: Uint8Array): Generator<Uint8Array> {
  for (let offset = 0; offset < bytes.byteLength; offset += CHUNK_BYTES) {
    yield bytes.subarray(offset, offset + CHUNK_BYTES);
  }
}

/** An {@link OpenSource} over bytes in memory: slices of at most {@link CHUNK_BYTES}, never copies. */
export function bytesSource(bytes: Uint8Array): OpenSource {
  const iterator = slices(bytes);
  return { next: () => iterator.next(), close: () => iterator.return(undefined) };
}

/** An {@link OpenSource} over a Node Readable (duck-typed, so Bun's too): chunks as they come; `close` destroys it. */
export function readableSource(stream: Readable): OpenSource {
  const iterator = stream[Symbol.asyncIterator]();
  return { next: () => iterator.next(), close: () => stream.destroy() };
}

/**
 * An {@link OpenSource} over a web stream's reader: `first` (chunks already read to sniff the format)
 * come back first; `close` cancels the stream.
 */
export function readerSource(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  first: readonly Uint8Array[] = [],
): OpenSource {
  let index = 0;
  let closed = false;
  return {
    next: () => {
      if (index < first.length) return { done: false, value: first[index++] };
      return reader.read() as Promise<IteratorResult<unknown>>;
    },
    close: () => {
      if (closed) return;
      closed = true;
      reader.cancel().catch(() => {});
    },
  };
}
