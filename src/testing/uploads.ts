/** The upload endpoints' rules (spec 9-11): field names, formats, sizes; and reading a multipart body. */
import { createHash } from 'node:crypto';
import type { RecordedPart } from './types.js';

/** The three upload kinds. */
export type UploadKind = 'image' | 'video' | 'audio';

interface UploadRule {
  /** The multipart field the file must come in. */
  field: string;
  /** Accepted Content-Types, with the extension each is stored under. */
  types: Record<string, string>;
  /** Accepted file name extensions (spec "Limits"). */
  extensions: readonly string[];
  maxBytes: number;
}

const MB = 1024 * 1024;

/** Per kind: the spec's field, formats (with common MIME aliases) and size. */
export const UPLOAD_RULES: Record<UploadKind, UploadRule> = {
  image: {
    field: 'file',
    types: {
      'image/jpeg': 'jpg',
      'image/jpg': 'jpg',
      'image/pjpeg': 'jpg',
      'image/png': 'png',
      'image/webp': 'webp',
    },
    extensions: ['jpg', 'jpeg', 'png', 'webp'],
    maxBytes: 5 * MB,
  },
  video: {
    field: 'video',
    types: {
      'video/mp4': 'mp4',
      'video/x-msvideo': 'avi',
      'video/avi': 'avi',
      'video/msvideo': 'avi',
      'video/x-matroska': 'mkv',
      'video/quicktime': 'mov',
      'video/webm': 'webm',
      'video/ogg': 'ogg',
      'application/ogg': 'ogg',
      'video/3gpp': '3gp',
      'video/3gpp2': '3g2',
    },
    extensions: ['mp4', 'avi', 'mkv', 'mov', 'webm', 'ogg', '3gp', '3g2'],
    maxBytes: 100 * MB,
  },
  audio: {
    field: 'audio',
    types: {
      'audio/mpeg': 'mp3',
      'audio/mp3': 'mp3',
      'audio/wav': 'wav',
      'audio/x-wav': 'wav',
      'audio/wave': 'wav',
      'audio/vnd.wave': 'wav',
      'audio/ogg': 'ogg',
      'audio/mp4': 'm4a',
      'audio/x-m4a': 'm4a',
      'audio/m4a': 'm4a',
      'audio/aac': 'aac',
      'audio/x-aac': 'aac',
      'audio/aacp': 'aac',
    },
    extensions: ['mp3', 'wav', 'ogg', 'm4a', 'aac'],
    maxBytes: 100 * MB,
  },
};

/** A file part, read. */
export interface FilePart {
  field: string;
  filename: string;
  /** The part's Content-Type without parameters, lower case; `''` when absent. */
  contentType: string;
  bytes: Uint8Array;
  sha256: string;
}

/** A multipart body: its file parts, and every part as recorded. */
export interface ParsedForm {
  files: FilePart[];
  parts: RecordedPart[];
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Parses multipart/form-data with the platform's own parser; `undefined` when it is malformed. */
export async function parseMultipart(contentType: string, body: Uint8Array): Promise<ParsedForm | undefined> {
  let form: FormData;
  try {
    // Node's bodies are never SharedArrayBuffer-backed; the cast only narrows the type.
    const bytes = body as Uint8Array<ArrayBuffer>;
    form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData();
  } catch {
    return undefined;
  }
  const files: FilePart[] = [];
  const parts: RecordedPart[] = [];
  const entries: [string, FormDataEntryValue][] = [];
  form.forEach((value, field) => {
    entries.push([field, value]);
  });
  for (const [field, value] of entries) {
    if (typeof value === 'string') {
      const bytes = Buffer.from(value);
      parts.push({ field, size: bytes.length, sha256: sha256(bytes) });
      continue;
    }
    const bytes = new Uint8Array(await value.arrayBuffer());
    const type = value.type.split(';')[0]?.trim().toLowerCase() ?? '';
    const file = { field, filename: value.name, contentType: type, bytes, sha256: sha256(bytes) };
    files.push(file);
    parts.push({
      field,
      filename: file.filename,
      contentType: type,
      size: bytes.length,
      sha256: file.sha256,
    });
  }
  return { files, parts };
}

const GENERIC_TYPES = new Set(['', 'application/octet-stream']);

/**
 * The extension a file is stored under, or `undefined` when its format is not accepted. The Content-Type
 * decides; a generic one (`application/octet-stream`) falls back to the file name's extension, except
 * for audio, whose error names the MIME type (spec 11).
 */
export function acceptedExtension(kind: UploadKind, file: FilePart): string | undefined {
  const rule = UPLOAD_RULES[kind];
  const byType = rule.types[file.contentType];
  if (byType) return byType;
  if (kind === 'audio' || !GENERIC_TYPES.has(file.contentType)) return undefined;
  const ext = /\.([a-z0-9]+)$/i.exec(file.filename)?.[1]?.toLowerCase();
  return ext && rule.extensions.includes(ext) ? ext : undefined;
}

/** The Content-Type to serve a stored file with. */
export function servedType(kind: UploadKind, file: FilePart, ext: string): string {
  if (!GENERIC_TYPES.has(file.contentType)) return file.contentType;
  const byExt = Object.entries(UPLOAD_RULES[kind].types).find(
    ([, e]) => e === ext || (ext === 'jpeg' && e === 'jpg'),
  );
  return byExt?.[0] ?? 'application/octet-stream';
}

/**
 * Seconds of audio, estimated: from a WAV header's byte rate when there is one, else at 128 kbit/s.
 * At least 1, rounded to a whole second.
 */
export function estimateAudioSeconds(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const ascii = (at: number) => String.fromCharCode(...bytes.subarray(at, at + 4));
  let bytesPerSecond = 16_000;
  if (bytes.length >= 44 && ascii(0) === 'RIFF' && ascii(8) === 'WAVE') {
    const rate = view.getUint32(28, true);
    if (rate > 0) bytesPerSecond = rate;
  }
  return Math.max(1, Math.round(bytes.length / bytesPerSecond));
}
