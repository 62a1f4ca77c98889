import type { UploadKind } from './types.js';

/** One megabyte as the limits count it: 1 MB = 1024 * 1024 bytes (the spec gives "5 MB" and "100 MB"). */
export const MB = 1024 * 1024;

/** What a file type detector found in the bytes (file-type's result). */
export interface DetectedType {
  ext: string;
  mime: string;
}

/** A format an upload endpoint accepts, as it goes out. */
export interface AcceptedFormat {
  /** Extension for a default file name (`<kind>.<ext>`). */
  ext: string;
  /** The part's Content-Type, one the server accepts for this endpoint. */
  contentType: string;
}

/** The rules of one upload endpoint (spec endpoints 9-11 and "Limits"). */
export interface UploadRules {
  /** The client method, named in every message. */
  method: string;
  /** The multipart field of the file. */
  field: string;
  maxBytes: number;
  /** The spec's list, as shown in messages. */
  allowed: readonly string[];
  /** What the endpoint takes, in words: "not a recognised image". */
  noun: string;
  /** Detected extension (file-type's `ext`) -> what is sent. */
  formats: Readonly<Record<string, AcceptedFormat>>;
}

const OGG_EXTS = ['ogg', 'ogv', 'ogm', 'oga', 'opus', 'spx', 'ogx'];
// Every Ogg stream is an OGG file to both endpoints (spec: OGG is a video and an audio format); the
// part's type follows the endpoint, since the codec inside does not change what the server stores.
const oggAs = (contentType: string) =>
  Object.fromEntries(OGG_EXTS.map((ext) => [ext, { ext: 'ogg', contentType }]));

export const UPLOAD_RULES: Readonly<Record<UploadKind, UploadRules>> = {
  image: {
    method: 'uploadImage',
    field: 'file',
    maxBytes: 5 * MB,
    allowed: ['JPG', 'JPEG', 'PNG', 'WEBP'],
    noun: 'image',
    formats: {
      jpg: { ext: 'jpg', contentType: 'image/jpeg' },
      png: { ext: 'png', contentType: 'image/png' },
      // An animated PNG is a valid PNG (viewers that do not know APNG show its first frame).
      apng: { ext: 'png', contentType: 'image/png' },
      webp: { ext: 'webp', contentType: 'image/webp' },
    },
  },
  video: {
    method: 'uploadVideo',
    field: 'video',
    maxBytes: 100 * MB,
    allowed: ['MP4', 'AVI', 'MKV', 'MOV', 'WEBM', 'OGG', '3GP', '3G2'],
    noun: 'video',
    formats: {
      mp4: { ext: 'mp4', contentType: 'video/mp4' },
      // Apple's M4V brand is an MP4 file with another label in its `ftyp` box.
      m4v: { ext: 'mp4', contentType: 'video/mp4' },
      avi: { ext: 'avi', contentType: 'video/x-msvideo' },
      mkv: { ext: 'mkv', contentType: 'video/x-matroska' },
      mov: { ext: 'mov', contentType: 'video/quicktime' },
      webm: { ext: 'webm', contentType: 'video/webm' },
      '3gp': { ext: '3gp', contentType: 'video/3gpp' },
      '3g2': { ext: '3g2', contentType: 'video/3gpp2' },
      ...oggAs('video/ogg'),
    },
  },
  audio: {
    method: 'uploadAudio',
    field: 'audio',
    maxBytes: 100 * MB,
    allowed: ['MP3', 'WAV', 'OGG', 'M4A', 'AAC'],
    noun: 'audio file',
    formats: {
      mp3: { ext: 'mp3', contentType: 'audio/mpeg' },
      wav: { ext: 'wav', contentType: 'audio/wav' },
      m4a: { ext: 'm4a', contentType: 'audio/mp4' },
      aac: { ext: 'aac', contentType: 'audio/aac' },
      ...oggAs('audio/ogg'),
    },
  },
};

/** What the caller said the file is: the name's extension and a declared type. Hints, never proof. */
export interface FormatHints {
  filename: string | undefined;
  contentType: string | undefined;
}

const M4A: AcceptedFormat = { ext: 'm4a', contentType: 'audio/mp4' };

function extensionOf(filename: string | undefined): string | undefined {
  const match = /\.([^./\\]+)$/.exec(filename ?? '');
  return match?.[1]?.toLowerCase();
}

/** An MP4 file that holds only audio, by the caller's word: named .m4a/.aac or declared as audio. */
function saysAudio(hints: FormatHints): boolean {
  const ext = extensionOf(hints.filename);
  return ext === 'm4a' || ext === 'aac' || /^audio\//i.test(hints.contentType ?? '');
}

/**
 * The accepted format for what was detected, or `undefined` when the endpoint refuses it. The bytes
 * decide; hints only settle the one case the signature cannot: an MP4 container with a generic brand
 * (`isom`, `mp42` ...) is the same file whether it holds video or only audio (M4A).
 */
export function acceptedFormat(
  kind: UploadKind,
  detected: DetectedType,
  hints: FormatHints,
): AcceptedFormat | undefined {
  const format = UPLOAD_RULES[kind].formats[detected.ext];
  if (format) return format;
  if (kind === 'audio' && detected.ext === 'mp4' && saysAudio(hints)) return M4A;
  return undefined;
}

/** What would make a refused file accepted, when one of the hints of {@link saysAudio} would. */
export function refusalHint(kind: UploadKind, detected: DetectedType): string {
  return kind === 'audio' && detected.ext === 'mp4'
    ? ' (an MP4 file that holds only audio is accepted as M4A when its name ends in .m4a or .aac, ' +
        "or its contentType is audio/*, e.g. 'audio/mp4')"
    : '';
}

/** "a GIF image (image/gif)", "an MP4 video (video/mp4)", "a PDF file (application/pdf)". */
export function describeDetected(detected: DetectedType): string {
  const label = detected.ext.toUpperCase();
  const top = detected.mime.split('/')[0];
  const noun =
    top === 'image' ? 'image' : top === 'video' ? 'video' : top === 'audio' ? 'audio file' : 'file';
  // Said letter by letter, these labels start with a vowel sound: "an MP4", "an SVG", "an OGG".
  const article = /^([AEIO]|[FHLMNRSX](?!LAC)[^AEIOU])/.test(label) ? 'an' : 'a';
  return `${article} ${label} ${noun} (${detected.mime})`;
}

/**
 * "is 104.9 MB; the limit is 100 MB", with exact byte counts when one decimal would hide that the size
 * passes the limit.
 */
export function describeOverLimit(bytes: number, maxBytes: number): string {
  const shown = (bytes / MB).toFixed(1);
  const limit = `${maxBytes / MB} MB`;
  if (Number(shown) > maxBytes / MB) return `is ${shown} MB; the limit is ${limit}`;
  return `is ${bytes.toLocaleString('en-US')} bytes; the limit is ${limit} (${maxBytes.toLocaleString('en-US')} bytes)`;
}
