import { Readable } from 'node:stream';
import type { UploadProgress } from './types.js';

/** The bytes of one attempt, open. */
export interface OpenSource {
  /** The next chunk (Buffer, Uint8Array or string). */
  next(): Promise<IteratorResult<unknown>> | IteratorResult<unknown>;
  /** Ends the source early (closes a file, cancels a Blob's stream); safe to call more than once. */
  close(): void;
}

/** Opens the source; called on the first read, so nothing is opened for a body that is never sent. */
export type ChunkSource = () => OpenSource;

/** An {@link OpenSource} over a Node Readable: chunks as they come, `close` destroys the stream. */
export function readableSource(stream: Readable): OpenSource {
  const iterator = stream[Symbol.asyncIterator]();
  return { next: () => iterator.next(), close: () => stream.destroy() };
}

/** An {@link OpenSource} over bytes in memory: slices of at most {@link CHUNK_BYTES}, never copies. */
export function bytesSource(bytes: Uint8Array): OpenSource {
  const iterator = slices(bytes);
  return { next: () => iterator.next(), close: () => iterator.return(undefined) };
}

/** How an {@link UploadStream} counts and checks what it passes on. */
export interface UploadStreamOptions {
  open: ChunkSource;
  /** The size announced in Content-Length, or `undefined` for a stream of unknown length. */
  total: number | undefined;
  /** The error to fail with once more than the limit has passed (unknown length only). */
  maxBytes: number;
  tooLarge: () => Error;
  /** The error to fail with when the source gives more or fewer bytes than `total`. */
  sizeChanged: (loaded: number) => Error;
  onProgress: ((progress: UploadProgress) => void) | undefined;
}

/** Chunks of at most this size: a big Buffer goes out in slices, so progress moves and nothing is copied. */
export const CHUNK_BYTES = 64 * 1024;

/** A stream's chunk as bytes, without copying. */
export function toBuffer(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  if (typeof chunk === 'string') return Buffer.from(chunk);
  throw new TypeError(`the file's stream gave a ${typeof chunk} chunk, not bytes`);
}

/** Slices of `bytes`, views on the same memory. */
export function* slices(bytes: Uint8Array): Generator<Buffer> {
  const buffer = toBuffer(bytes);
  for (let offset = 0; offset < buffer.length; offset += CHUNK_BYTES) {
    yield buffer.subarray(offset, offset + CHUNK_BYTES);
  }
}

/**
 * The file's bytes as one multipart part reads them: pulled from the source only when the body is
 * read (a bounded buffer, so memory stays flat whatever the size), counted for `onProgress`, and
 * checked: an upload of unknown length fails once it passes the limit, and one of known length fails
 * if the file changed size since it was checked (the Content-Length would be wrong).
 */
export class UploadStream extends Readable {
  #options: UploadStreamOptions;
  #source: OpenSource | undefined;
  #loaded = 0;

  constructor(options: UploadStreamOptions) {
    super({ highWaterMark: CHUNK_BYTES });
    this.#options = options;
  }

  override _read(): void {
    const options = this.#options;
    if (this.#source === undefined) {
      if (!this.#report({ loaded: 0, total: options.total })) return;
      try {
        this.#source = options.open();
      } catch (error) {
        this.destroy(error as Error);
        return;
      }
    }
    const source = this.#source;
    new Promise<IteratorResult<unknown>>((resolve) => resolve(source.next())).then(
      (result) => this.#take(result),
      (error: unknown) => this.destroy(error as Error),
    );
  }

  #take(result: IteratorResult<unknown>): void {
    if (this.destroyed) return;
    const { total, maxBytes } = this.#options;
    if (result.done) {
      if (total !== undefined && this.#loaded !== total) {
        this.destroy(this.#options.sizeChanged(this.#loaded));
        return;
      }
      this.push(null);
      return;
    }
    let chunk: Buffer;
    try {
      chunk = toBuffer(result.value);
    } catch (error) {
      this.destroy(error as Error);
      return;
    }
    this.#loaded += chunk.length;
    if (total === undefined && this.#loaded > maxBytes) {
      this.destroy(this.#options.tooLarge());
      return;
    }
    if (total !== undefined && this.#loaded > total) {
      this.destroy(this.#options.sizeChanged(this.#loaded));
      return;
    }
    if (!this.#report({ loaded: this.#loaded, total })) return;
    this.push(chunk);
  }

  /** Calls `onProgress`; an exception there fails the upload rather than vanishing. */
  #report(progress: UploadProgress): boolean {
    try {
      this.#options.onProgress?.(progress);
      return true;
    } catch (error) {
      this.destroy(error as Error);
      return false;
    }
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Ends the source early, directly (not through a pending read): closes a file stream, cancels a
    // Blob's stream, destroys a caller's stream.
    try {
      this.#source?.close();
    } catch {
      // Closing is best effort; the error that ended the upload is the one that matters.
    }
    callback(error);
  }
}
