import type { Readable } from 'node:stream';
import type { ChunkSource } from './chunks.js';

export type { UploadOptions, UploadProgress } from '../schemas/requests.js';

/** The three upload endpoints (9-11 of the spec). */
export type UploadKind = 'image' | 'video' | 'audio';

/**
 * A Node `Readable` (`node:stream`, Bun's too), by the methods the SDK reads it with. Declared here, not
 * imported from `node:stream`, so that the package's types compile in a project without Node's types
 * (a Worker); every Node `Readable` (a file stream, `Readable.from(...)`, an HTTP response) is one.
 */
export interface NodeReadable {
  /** Reads what is buffered (`null` when nothing is). */
  read(size?: number): unknown;
  /** Puts bytes back at the front of the stream. */
  unshift(chunk: Uint8Array): void;
  /** Listens to one of the stream's events. */
  on(event: 'readable' | 'data' | 'end' | 'error' | 'close', listener: (...args: unknown[]) => void): unknown;
}

/**
 * Where the bytes of a file come from: a path or a `file:` URL (on runtimes with a file system: Node,
 * Bun, Deno), bytes in memory (`Uint8Array`, `Buffer`, `ArrayBuffer`), a Blob or File, or a stream:
 * a web `ReadableStream` or a Node Readable (read once, so an upload from it is never retried).
 */
export type FileSource =
  | string
  | URL
  | Uint8Array
  | ArrayBuffer
  | Blob
  | ReadableStream<Uint8Array>
  | NodeReadable;

/** A file to upload: a {@link FileSource}, or one with its name and type given. */
export type FileInput =
  | FileSource
  | {
      /** The file. */
      data: FileSource;
      /** The file name sent with it; by default from a path, else `file`. */
      filename?: string | undefined;
      /** The content type sent with it; by default from the file's bytes. */
      contentType?: string | undefined;
    };

/** One multipart body for one attempt, in the form the client's transport sends. */
export interface UploadBody {
  /** A form-data stream (undici on Node) or a `FormData` (fetch). */
  body: Readable | FormData;
  /** `content-type` with the boundary, and `content-length` when every length is known; none for a `FormData`. */
  headers: Record<string, string>;
  /**
   * Closes what the body opened (file streams) when the attempt ends before the body was read; for a
   * one-shot stream, also destroys the caller's stream, which cannot serve another attempt. Safe to
   * call after a complete attempt too.
   */
  dispose(): void;
  /** Told once the whole body went out, when the transport cannot count the bytes as they go (fetch). */
  sent?: (() => void) | undefined;
}

/** The bytes of one attempt, for whichever multipart body the transport makes. */
export interface UploadContent {
  /** The bytes as chunks, opened on the first read. */
  open: ChunkSource;
  /**
   * The bytes as a Blob without reading them into memory where the source allows (bytes, a Blob, a file
   * on Node or Bun); `undefined` for a one-shot stream.
   */
  blob: (() => Promise<Blob>) | undefined;
  /** Releases a one-shot stream that this attempt will not read (safe to call more than once). */
  release(): void;
}

/** A file checked for format and size, ready to go out as many times as its source allows. */
export interface PreparedUpload {
  /** Which of the three kinds of upload. */
  kind: UploadKind;
  /** The multipart field: `file`, `video` or `audio`. */
  field: string;
  /** The file name sent with it. */
  filename: string;
  /** The part's Content-Type, from the bytes' signature. */
  contentType: string;
  /** Bytes, when known before sending. */
  size: number | undefined;
  /** The endpoint's limit, in bytes. */
  maxBytes: number;
  /** `true` when the source can be read again (path, URL, bytes, Blob); a one-shot stream cannot. */
  replayable: boolean;
  /**
   * The bytes for one attempt; for a source that is not replayable, only once (a second call throws
   * an `OAError`). The file is opened only when the body is read.
   */
  content(): UploadContent;
  /** The `OAValidationError` of a stream of unknown length that passed the limit. */
  tooLarge(): Error;
  /** The `OAError` of a file that gave `loaded` bytes when `size` were checked. */
  sizeChanged(loaded: number): Error;
  /** Releases what was taken from the caller (destroys a one-shot stream) once the call has settled. */
  discard(): void;
}
