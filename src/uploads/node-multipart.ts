/**
 * The multipart body on Node's undici transport: form-data streaming the file through an
 * {@link UploadStream}, so that memory stays flat whatever the size. Reached only from Node's transport.
 */
import { Readable } from 'node:stream';
import type FormDataClass from 'form-data';
import { CHUNK_BYTES, type ChunkSource, type OpenSource, toBytes } from './chunks.js';
import type { PreparedUpload, UploadBody, UploadProgress } from './types.js';

/** How an {@link UploadStream} counts and checks what it passes on. */
interface UploadStreamOptions {
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

/**
 * The file's bytes as one multipart part reads them: pulled from the source only when the body is
 * read (a bounded buffer, so memory stays flat whatever the size), counted for `onProgress`, and
 * checked: an upload of unknown length fails once it passes the limit, and one of known length fails
 * if the file changed size since it was checked (the Content-Length would be wrong).
 */
class UploadStream extends Readable {
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
      const bytes = toBytes(result.value);
      chunk = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
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

let FormData: typeof FormDataClass | undefined;

/**
 * One attempt's form-data body. form-data is loaded by the first upload, not at import (with its MIME
 * database, a large part of import time).
 */
export async function streamingMultipart(
  upload: PreparedUpload,
  onProgress?: ((progress: UploadProgress) => void) | undefined,
): Promise<UploadBody & { body: Readable }> {
  const content = upload.content();
  try {
    FormData ??= (await import('form-data')).default;
  } catch (error) {
    content.release();
    throw error;
  }
  const { size, filename, contentType } = upload;
  const stream = new UploadStream({
    open: content.open,
    total: size,
    maxBytes: upload.maxBytes,
    tooLarge: upload.tooLarge,
    sizeChanged: upload.sizeChanged,
    onProgress,
  });
  const form = new FormData();
  form.append(upload.field, stream, {
    filename,
    contentType,
    ...(size === undefined ? {} : { knownLength: size }),
  });
  const headers: Record<string, string> = { ...form.getHeaders() };
  if (form.hasKnownLength()) headers['content-length'] = String(form.getLengthSync());
  const dispose = () => {
    stream.destroy();
    // A one-shot stream cannot serve another attempt: release it even if this one never read it.
    content.release();
  };
  return { body: form as unknown as Readable, headers, dispose };
}
