/** What the upload endpoints store: files served back by URL, and video tickets with their transcode. */
import { randomUUID } from 'node:crypto';
import type { StoredUpload } from './types.js';
import {
  acceptedExtension,
  estimateAudioSeconds,
  type ParsedForm,
  servedType,
  UPLOAD_RULES,
  type UploadKind,
} from './uploads.js';

/** The outcome of an upload: its `data`, or why it was refused (`topLevel`: the other error layout). */
export type UploadOutcome = { ok: Record<string, unknown> } | { refused: string; topLevel?: true };

/** Settings of a {@link MediaStore}. */
export interface MediaStoreOptions {
  transcodeMs: number;
  maxBytes: Record<UploadKind, number>;
}

/** Uploaded files and video tickets, in memory; the clock is passed in. */
export class MediaStore {
  /** Every stored upload, oldest first. */
  readonly uploads: StoredUpload[] = [];
  readonly #options: MediaStoreOptions;
  /** Path (`/uploads/...`) -> bytes to serve. */
  #files = new Map<string, { bytes: Uint8Array; contentType: string }>();
  /** Ticket id -> when its transcode ends. */
  #tickets = new Map<string, number>();

  constructor(options: MediaStoreOptions) {
    this.#options = options;
  }

  /** Checks and stores the file of an upload of `kind` (spec 9-11). URLs start with `publicUrl`. */
  upload(kind: UploadKind, form: ParsedForm, now: number, publicUrl: string): UploadOutcome {
    const { field } = UPLOAD_RULES[kind];
    // multer's FileInterceptor refuses a file in any other field.
    if (form.files.some((f) => f.field !== field)) return { refused: 'Unexpected field' };
    const file = form.files.find((f) => f.field === field);
    if (!file) return { refused: `File is required in field '${field}'` };
    const ext = acceptedExtension(kind, file);
    if (!ext) {
      const mime = file.contentType || 'application/octet-stream';
      // Spec 11 shows this error with its fields at the top level.
      if (kind === 'audio') return { refused: `Invalid audio file type: ${mime}`, topLevel: true };
      return { refused: `Invalid ${kind} file type: ${mime}` };
    }
    if (file.bytes.byteLength > this.#options.maxBytes[kind]) return { refused: 'File too large' };

    const id = randomUUID();
    const contentType = servedType(kind, file, ext);
    let result: Record<string, unknown>;
    if (kind === 'video') {
      this.#tickets.set(id, now + this.#options.transcodeMs);
      result = { ticket_id: id };
    } else {
      const stored = `uploads/${kind === 'image' ? 'images' : 'audio'}/${id}.${ext}`;
      this.#files.set(`/${stored}`, { bytes: file.bytes, contentType });
      result =
        kind === 'image'
          ? { src_file: stored, url: `${publicUrl}/${stored}` }
          : {
              audio_url: `${publicUrl}/${stored}`,
              audio_uuid: id,
              audio_size: file.bytes.byteLength,
              audio_duration: estimateAudioSeconds(file.bytes),
            };
    }
    const { filename, sha256, bytes } = file;
    this.uploads.push({
      kind,
      filename,
      contentType,
      size: bytes.byteLength,
      sha256,
      bytes,
      result,
      at: now,
    });
    return { ok: result };
  }

  /** The stored file at a path, to serve. */
  file(path: string): { bytes: Uint8Array; contentType: string } | undefined {
    return this.#files.get(path);
  }

  /** Why a ticket cannot be broadcast now, or `undefined` when it can. */
  ticketProblem(ticket_id: string, now: number): 'unknown' | 'converting' | undefined {
    const readyAt = this.#tickets.get(ticket_id);
    if (readyAt === undefined) return 'unknown';
    return now < readyAt ? 'converting' : undefined;
  }

  /** Ends the transcode of one ticket, or of all. */
  completeTranscodes(now: number, ticket_id?: string): void {
    for (const id of ticket_id === undefined ? [...this.#tickets.keys()] : [ticket_id]) {
      if (this.#tickets.has(id)) this.#tickets.set(id, now);
    }
  }

  /** Forgets every file and ticket. */
  clear(): void {
    this.uploads.length = 0;
    this.#files.clear();
    this.#tickets.clear();
  }
}
