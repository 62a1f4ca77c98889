/**
 * Compressed webhook bodies, through both handlers: `Content-Encoding` gzip, deflate and br are decoded
 * (within `maxBodyBytes` after decoding, so a zip bomb is refused with 413 without being inflated), an
 * encoding the handler cannot read answers 415 (not 400, which would tell the sender to give up).
 */
import { once } from 'node:events';
import {
  brotliCompressSync,
  constants,
  createBrotliCompress,
  deflateRawSync,
  deflateSync,
  gzipSync,
} from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { getMessageText, type WebhookEvent } from '../../src/webhook/index.js';
import { eachDriver } from './drivers.js';
import { textEvent, trackUnhandledRejections } from './support.js';

const unhandled = trackUnhandledRejections();

const MiB = 1024 * 1024;
const json = (text: string, seq = 1) => Buffer.from(JSON.stringify(textEvent(text, seq)));

const ENCODERS: [string, (bytes: Buffer) => Buffer][] = [
  ['gzip', (bytes) => gzipSync(bytes)],
  ['x-gzip', (bytes) => gzipSync(bytes)],
  ['deflate', (bytes) => deflateSync(bytes)],
  ['br', (bytes) => brotliCompressSync(bytes)],
  ['GZip', (bytes) => gzipSync(bytes)],
  ['identity', (bytes) => bytes],
  ['identity, gzip', (bytes) => gzipSync(bytes)],
];

/** `gib` GiB of zeros, brotli-compressed as it streams (about 190 KB a GiB), never held whole. */
async function brotliBomb(gib: number): Promise<Buffer> {
  const compress = createBrotliCompress({ params: { [constants.BROTLI_PARAM_QUALITY]: 1 } });
  const parts: Buffer[] = [];
  compress.on('data', (part: Buffer) => parts.push(part));
  const zeros = Buffer.alloc(MiB);
  for (let i = 0; i < gib * 1024; i++) {
    if (!compress.write(zeros)) await once(compress, 'drain');
  }
  compress.end();
  await once(compress, 'end');
  return Buffer.concat(parts);
}

/** The highest resident set size seen while `run` runs, above the one before it. */
async function peakRssGrowth<T>(run: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 2);
  try {
    const value = await run();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { value, growth: peak - before };
  } finally {
    clearInterval(timer);
  }
}

let gzipBomb: Buffer;
let brBomb: Buffer;
beforeAll(async () => {
  gzipBomb = gzipSync(Buffer.alloc(50 * MiB), { level: 9 });
  brBomb = await brotliBomb(1);
}, 30_000);

describe('Content-Encoding', () => {
  eachDriver(unhandled, (start) => {
    it.each(ENCODERS)('a body sent with Content-Encoding: %s reaches onEvent', async (coding, encode) => {
      const seen: WebhookEvent[] = [];
      const driver = await start({ onEvent: (event) => void seen.push(event) });
      const answer = await driver.send('POST', encode(json(`hello ${coding}`)), {
        'content-encoding': coding,
      });
      expect(answer).toMatchObject({ status: 200, json: { ok: true } });
      expect(seen.map(getMessageText)).toEqual([`hello ${coding}`]);
    });

    it('a raw deflate stream sent as Content-Encoding: deflate (as some senders do) is read too', async () => {
      const seen: WebhookEvent[] = [];
      const driver = await start({ onEvent: (event) => void seen.push(event) });
      const answer = await driver.send('POST', deflateRawSync(json('raw')), {
        'content-encoding': 'deflate',
      });
      expect(answer.status).toBe(200);
      expect(seen.map(getMessageText)).toEqual(['raw']);
    });

    it.each(['zstd', 'compress', 'made-up'])(
      'Content-Encoding: %s answers 415 and onEvent is not called',
      async (coding) => {
        let calls = 0;
        const driver = await start({ onEvent: () => void calls++ });
        const answer = await driver.send('POST', json('unreadable'), { 'content-encoding': coding });
        expect(answer.status).toBe(415);
        expect(String(answer.json.error)).toMatch(/encoding/i);
        expect(calls).toBe(0);
      },
    );

    it('maxBodyBytes bounds the decoded body: a small gzip of a large event answers 413', async () => {
      let calls = 0;
      const driver = await start({ onEvent: () => void calls++, maxBodyBytes: 4096 });
      const large = gzipSync(Buffer.from(JSON.stringify({ ...textEvent('big'), pad: 'x'.repeat(8192) })));
      expect(large.byteLength).toBeLessThan(4096);
      expect((await driver.send('POST', large, { 'content-encoding': 'gzip' })).status).toBe(413);
      expect(calls).toBe(0);
    });

    it('a gzip bomb (50 MB of zeros) answers 413', async () => {
      let calls = 0;
      const driver = await start({ onEvent: () => void calls++ });
      expect(gzipBomb.byteLength).toBeLessThan(MiB);
      expect((await driver.send('POST', gzipBomb, { 'content-encoding': 'gzip' })).status).toBe(413);
      expect(calls).toBe(0);
    });

    it('a brotli bomb (1 GiB of zeros) answers 413 without being inflated: memory stays bounded', async () => {
      const driver = await start({ onEvent: () => undefined });
      expect(brBomb.byteLength).toBeLessThan(MiB);
      const { value, growth } = await peakRssGrowth(() =>
        driver.send('POST', brBomb, { 'content-encoding': 'br' }),
      );
      expect(value.status).toBe(413);
      // Inflating it all would take a GiB; stopping at maxBodyBytes takes a few MiB.
      expect(growth).toBeLessThan(200 * MiB);
    });

    it('a body that is not the gzip it claims to be answers 400', async () => {
      let calls = 0;
      const driver = await start({ onEvent: () => void calls++ });
      const answer = await driver.send('POST', json('plain'), { 'content-encoding': 'gzip' });
      expect(answer.status).toBe(400);
      expect(String(answer.json.error)).toMatch(/gzip/);
      expect(calls).toBe(0);
    });
  });
});
