/**
 * The multipart body on the fetch transport: the runtime's own `FormData` with one Blob part, so that
 * fetch writes the boundary and the length. No Node built-in here: it runs on every runtime.
 */
import { concatBytes, toBytes } from './chunks.js';
import type { PreparedUpload, UploadBody, UploadContent, UploadProgress } from './types.js';

/**
 * One attempt's `FormData`. A source that can be a Blob (bytes, a Blob, a file on Node and Bun) goes as
 * one, read by fetch as the request leaves; a one-shot stream is read into memory first, counted
 * against the endpoint's limit (fetch takes no stream inside a `FormData`, and a part must have its
 * length before the body starts). Progress: `loaded: 0` before, `loaded: total` once fetch has an
 * answer; fetch reports nothing in between.
 */
export async function formDataMultipart(
  upload: PreparedUpload,
  onProgress: ((progress: UploadProgress) => void) | undefined,
): Promise<UploadBody> {
  const content = upload.content();
  let blob: Blob;
  try {
    onProgress?.({ loaded: 0, total: upload.size });
    blob = content.blob ? await content.blob() : await readWhole(content, upload);
    if (upload.size !== undefined && blob.size !== upload.size) throw upload.sizeChanged(blob.size);
  } catch (error) {
    content.release();
    throw error;
  }
  const form = new FormData();
  // The part's Content-Type is the Blob's type: a slice re-labels it without copying the bytes.
  form.append(upload.field, blob.slice(0, blob.size, upload.contentType), upload.filename);
  const total = blob.size;
  return {
    body: form,
    // fetch writes content-type (with its boundary) and content-length for a FormData itself.
    headers: {},
    dispose: () => content.release(),
    sent: () => onProgress?.({ loaded: total, total }),
  };
}

/** A one-shot stream's bytes, refused past the endpoint's limit (or past the size that was checked). */
async function readWhole(content: UploadContent, upload: PreparedUpload): Promise<Blob> {
  const source = content.open();
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  try {
    for (let result = await source.next(); !result.done; result = await source.next()) {
      const bytes = toBytes(result.value);
      loaded += bytes.byteLength;
      if (upload.size === undefined && loaded > upload.maxBytes) throw upload.tooLarge();
      if (upload.size !== undefined && loaded > upload.size) throw upload.sizeChanged(loaded);
      chunks.push(bytes);
    }
  } catch (error) {
    source.close();
    throw error;
  }
  return new Blob([concatBytes(chunks, loaded) as Uint8Array<ArrayBuffer>]);
}
