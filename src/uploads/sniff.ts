/** A stream's first bytes, read without losing them: for a Node Readable and for a web stream. */
import type { Readable } from 'node:stream';
import { concatBytes, toBytes } from './chunks.js';

/** As much as file-type needs for nearly every format (its own `reasonableDetectionSizeInBytes`). */
export const SAMPLE_BYTES = 4100;
/** The most read ahead of a stream to look past an ID3 tag (cover art can make it large). */
const MAX_ID3_SAMPLE_BYTES = 1024 * 1024;

/** The first bytes of a stream, put back so that the stream still gives every byte. */
interface StreamSample {
  /** The first bytes read (all of them when `ended`). */
  head: Uint8Array;
  /** `true` when the stream ended within the sample: `head` is the whole content. */
  ended: boolean;
}

/**
 * How many bytes to read before detecting: an MP3 (or ADTS AAC) may start with an ID3 tag of any
 * size, and the format is only known from what follows it.
 */
export function wanted(head: Uint8Array): number {
  // "ID3"
  if (head.length >= 10 && head[0] === 0x49 && head[1] === 0x44 && head[2] === 0x33) {
    // Tag size: 4 "sync-safe" bytes of 7 bits each, after the 10-byte header.
    const size = ((head[6]! & 0x7f) << 21) | ((head[7]! & 0x7f) << 14) | ((head[8]! & 0x7f) << 7) | head[9]!;
    return Math.min(10 + size + SAMPLE_BYTES, MAX_ID3_SAMPLE_BYTES);
  }
  return SAMPLE_BYTES;
}

/**
 * Reads the first bytes of `stream` without consuming them: they are pushed back with `unshift`, so
 * whoever reads the stream next gets every byte. When the stream ends first, nothing is put back (a
 * stream that has emitted `end` takes no more) and `head` holds the whole content. When `signal` fires
 * first (the call was stopped), the stream is destroyed and the read rejects with the signal's reason.
 */
export function readSample(stream: Readable, signal?: AbortSignal | undefined): Promise<StreamSample> {
  return new Promise((resolve, reject) => {
    if (stream.readableEnded || stream.destroyed) {
      reject(new Error('the stream was already read to its end or closed'));
      return;
    }
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const chunks: unknown[] = [];
    const buffers: Uint8Array[] = [];
    let have = 0;
    let want = SAMPLE_BYTES;
    let sized = false;
    const cleanup = () => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
    };
    // A stream that stalls must not outlive its call: released at once, not when the call unwinds.
    const onAbort = () => {
      cleanup();
      stream.on('error', () => {});
      stream.destroy();
      reject(signal?.reason);
    };
    const onEnd = () => {
      cleanup();
      resolve({ head: concatBytes(buffers, have), ended: true });
    };
    const onError = (error: unknown) => {
      cleanup();
      reject(error);
    };
    const onReadable = () => {
      try {
        for (let chunk = stream.read(); chunk !== null; chunk = stream.read()) {
          const bytes = toBytes(chunk);
          chunks.push(chunk);
          buffers.push(bytes);
          have += bytes.length;
          if (!sized && have >= 10) {
            want = wanted(concatBytes(buffers, have));
            sized = true;
          }
          if (have >= want) break;
        }
      } catch (error) {
        onError(error);
        return;
      }
      if (have < want) return;
      cleanup();
      // Back to the front in reverse order, so the stream gives them again first and in order.
      for (let i = chunks.length - 1; i >= 0; i--) stream.unshift(chunks[i]);
      resolve({ head: concatBytes(buffers, have), ended: false });
    };
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The first bytes of a web stream, and the chunks they came in, to be given again first. */
interface WebStreamSample extends StreamSample {
  /** The chunks read, in order: whoever reads on gives these first, then the rest of the reader. */
  chunks: Uint8Array[];
}

/**
 * Reads the first bytes of a web stream through its `reader` (a web stream has no `unshift`: the
 * chunks read are returned, for the reader of the body to give first). When `signal` fires first (the
 * call was stopped), the stream is cancelled and the read rejects with the signal's reason.
 */
export async function readWebSample(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  signal?: AbortSignal | undefined,
): Promise<WebStreamSample> {
  const chunks: Uint8Array[] = [];
  let have = 0;
  let want = SAMPLE_BYTES;
  let sized = false;
  // Cancelling ends a pending read (it resolves as done), and the stream is released at once.
  const onAbort = () => {
    reader.cancel(signal?.reason).catch(() => {});
  };
  if (signal?.aborted) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  try {
    while (have < want) {
      const { done, value } = await reader.read();
      if (signal?.aborted) throw signal.reason;
      if (done) return { head: concatBytes(chunks, have), ended: true, chunks };
      const bytes = toBytes(value);
      chunks.push(bytes);
      have += bytes.byteLength;
      if (!sized && have >= 10) {
        want = wanted(concatBytes(chunks, have));
        sized = true;
      }
    }
    return { head: concatBytes(chunks, have), ended: false, chunks };
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}
