/**
 * Webhook bodies decoded with `node:zlib` (gzip, deflate, br), Node's decoder (`runtime-node.ts`): `node:zlib`
 * is imported only when an encoded body arrives, and a Worker bundle holds none of this.
 */
import { concatBytes } from '../uploads/chunks.js';
import { type Decoded, type Decoder, hasZlibHeader, TOO_LARGE, UNREADABLE, UNSUPPORTED } from './encoding.js';

/**
 * Decodes with `node:zlib`, streaming: the output is counted as it comes and the stream destroyed past
 * `limit`.
 */
export const decodeWithZlib: Decoder = async (bytes, coding, limit) => {
  let zlib: typeof import('node:zlib');
  try {
    zlib = await import('node:zlib');
  } catch {
    return UNSUPPORTED;
  }
  const stream =
    coding === 'gzip'
      ? zlib.createGunzip()
      : coding === 'br'
        ? zlib.createBrotliDecompress()
        : hasZlibHeader(bytes)
          ? zlib.createInflate()
          : zlib.createInflateRaw();
  return new Promise<Decoded>((resolve) => {
    const chunks: Uint8Array[] = [];
    let total = 0;
    stream.on('data', (chunk: Uint8Array) => {
      total += chunk.byteLength;
      if (total > limit) {
        // Stops the inflation here: what is left of a bomb is never produced.
        stream.destroy();
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(chunk);
    });
    stream.on('end', () => resolve(concatBytes(chunks, total)));
    stream.on('error', () => resolve(UNREADABLE));
    stream.end(bytes);
  });
};
