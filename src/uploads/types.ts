import type { Readable } from 'node:stream';
import type FormData from 'form-data';
import type { UploadProgress } from '../schemas/requests.js';

export type { UploadOptions, UploadProgress } from '../schemas/requests.js';

/** The three upload endpoints (9-11 of the spec). */
export type UploadKind = 'image' | 'video' | 'audio';

/**
 * Where the bytes of a file come from: a path, a `file:` URL, bytes in memory, a Blob or File, or a
 * Node Readable (read once, so an upload from it is never retried).
 */
export type FileSource = string | URL | Uint8Array | Blob | Readable;

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

/** One multipart body for one attempt. */
export interface UploadBody {
  /** The body. */
  body: FormData;
  /** `content-type` with the boundary, and `content-length` when every length is known. */
  headers: Record<string, string>;
  /**
   * Closes what the body opened (file streams) when the attempt ends before the body was read; for a
   * one-shot stream, also destroys the caller's stream, which cannot serve another attempt. Safe to
   * call after a complete attempt too.
   */
  dispose(): void;
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
  /** `true` when the source can be read again (path, URL, bytes, Blob); a one-shot stream cannot. */
  replayable: boolean;
  /**
   * A fresh body for one attempt; for a source that is not replayable, only once (a second call throws
   * an `OAError`). The file is opened only when the body is read. The body fails with an
   * `OAValidationError` when a stream of unknown length passes the size limit, and with an `OAError`
   * when a file changed size since it was checked; undici rejects the request with that error.
   */
  body(onProgress?: (progress: UploadProgress) => void): UploadBody;
  /** Releases what was taken from the caller (destroys a one-shot stream) once the call has settled. */
  discard(): void;
}
