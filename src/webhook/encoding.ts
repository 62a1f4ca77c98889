/**
 * Compressed webhook bodies (`Content-Encoding: gzip`, `deflate`, `br`), decoded within a byte limit:
 * decoding stops as soon as the output passes it, so a small body that inflates to gigabytes (a zip
 * bomb) costs no more than the limit. No Node built-in here: `node:zlib`'s decoder is the platform's
 * (`zlib-decoder.ts` on Node, imported only when an encoded body arrives; none off Node), and the
 * fetch handler decodes gzip and deflate with the standard `DecompressionStream` where the runtime has it.
 */
import { concatBytes } from '../uploads/chunks.js';

/** What a body reader returns when the body (as received, or decoded) passed `maxBodyBytes`. */
export const TOO_LARGE = Symbol('oa-messaging.webhook.tooLarge');
/** What a decoder returns when the bytes are not in the encoding they claim. */
export const UNREADABLE = Symbol('oa-messaging.webhook.unreadable');
/** What a decoder returns when this runtime has no decoder for the encoding. */
export const UNSUPPORTED = Symbol('oa-messaging.webhook.unsupported');

/** The content codings the handlers decode. */
export type ContentCoding = 'gzip' | 'deflate' | 'br';

/** What a decoder gives: the decoded bytes, or why there are none. */
export type Decoded = Uint8Array | typeof TOO_LARGE | typeof UNREADABLE | typeof UNSUPPORTED;

/** Decodes `bytes` in `coding`, stopping once the output passes `limit` bytes. */
export type Decoder = (bytes: Uint8Array, coding: ContentCoding, limit: number) => Promise<Decoded>;

const CODINGS: Record<string, ContentCoding> = {
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  br: 'br',
};

/**
 * The coding a `Content-Encoding` header asks to undo: `undefined` for none (absent, empty or
 * `identity`), else the one coding, or `{ unsupported }` naming what cannot be decoded (an unknown
 * coding, or more than one applied in a row, which no sender of webhooks does).
 */
export function contentCoding(
  header: string | string[] | null | undefined,
): ContentCoding | undefined | { unsupported: string } {
  // The common case, no header at all, without building the list.
  if (header === undefined || header === null || header === '') return undefined;
  const text = Array.isArray(header) ? header.join(',') : header;
  const codings = text
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return undefined;
  const known = codings.length === 1 ? CODINGS[codings[0] as string] : undefined;
  // Quoted back to the sender in the 415: its own header, cut short.
  return known ?? { unsupported: codings.join(', ').slice(0, 40) };
}

/** Reads `stream` whole unless it passes `limit` bytes; then cancels it and returns TOO_LARGE. */
export async function readCapped(
  stream: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Uint8Array | typeof TOO_LARGE> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  return concatBytes(chunks, total);
}

/**
 * Whether `bytes` start with a zlib header (RFC 1950), as `deflate` should; some senders send a raw
 * deflate stream (RFC 1951) under that name instead, which is read as such.
 */
export function hasZlibHeader(bytes: Uint8Array): boolean {
  const [cmf = 0, flg = 0] = bytes;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

/**
 * Decodes gzip and deflate with the standard `DecompressionStream` where the runtime has it, read with
 * the limit (a stream only inflates as far as it is read); br, and runtimes without it, go to
 * `fallback` (the platform's `node:zlib` decoder).
 */
export async function decodeWithStreams(
  bytes: Uint8Array,
  coding: ContentCoding,
  limit: number,
  fallback: Decoder,
): Promise<Decoded> {
  if (coding === 'br' || typeof DecompressionStream !== 'function') {
    return fallback(bytes, coding, limit);
  }
  const format = coding === 'gzip' ? 'gzip' : hasZlibHeader(bytes) ? 'deflate' : 'deflate-raw';
  const input = new ReadableStream<BufferSource>({
    start(controller) {
      // Never a SharedArrayBuffer here: the bytes were read from the request into a fresh array.
      controller.enqueue(bytes as Uint8Array<ArrayBuffer>);
      controller.close();
    },
  });
  try {
    return await readCapped(input.pipeThrough(new DecompressionStream(format)), limit);
  } catch {
    // The input is in memory: a failing read can only be bytes that are not in this format.
    return UNREADABLE;
  }
}
