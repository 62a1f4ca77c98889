// A bot reply whose image is a caller's stream that gives a few bytes, then nothing: the upload's read
// of it is inside the client's close(), on both transports, so the handler settles (and the webhook
// can answer) instead of hanging; the stream is released and nothing is sent.
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { OAClient, OAConnectionError } from '../../src/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { media } from '../uploads/support.js';

let mock: MockServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await mock?.close();
  client = undefined;
  mock = undefined;
});

/** A real PNG's first 200 bytes: fewer than the format check reads. */
const HEAD = new Uint8Array(media('sample.png').bytes).slice(0, 200);

/** A stalled stream; whether it was released; whether the upload is reading it (its format check). */
interface Stalled {
  image: Readable | ReadableStream<Uint8Array>;
  released: () => boolean;
  beingRead: () => boolean;
}

const STREAMS: [string, () => Stalled][] = [
  [
    'a Node Readable',
    () => {
      const stream = new Readable({ read() {} });
      stream.push(Buffer.from(HEAD));
      return {
        image: stream,
        released: () => stream.destroyed,
        beingRead: () => stream.listenerCount('readable') > 0,
      };
    },
  ],
  [
    'a web ReadableStream',
    () => {
      let cancelled = false;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(HEAD.slice());
        },
        cancel() {
          cancelled = true;
        },
      });
      return { image: stream, released: () => cancelled, beingRead: () => stream.locked };
    },
  ],
];

/**
 * When the test closes the client: as soon as the reply has started (the upload may not have begun to
 * read the stream), or once the upload reads it. Observed, not waited for with a pause.
 */
const MOMENTS = ['as the reply starts', 'while the stream is read'] as const;

describe.each([
  ['undici', false],
  ['fetch', true],
])('ctx.replyWithImage of a stalled stream, %s transport', (_transport, useFetch) => {
  describe.each(MOMENTS)('close() %s', (moment) => {
    it.each(STREAMS)('%s: ends the reply, the stream is released, nothing is sent', async (_s, make) => {
      mock = await createMockServer({ rateLimit: false });
      const oa = new OAClient({
        baseUrl: mock.url,
        apiKey: mock.apiKey,
        apiSecret: mock.apiSecret,
        ...(useFetch ? { fetch: globalThis.fetch } : {}),
      });
      client = oa;
      const { image, released, beingRead } = make();
      const bot = createBot({ client: oa, sessions: false });
      let replying = false;
      bot.on('text', async (ctx) => {
        replying = true;
        const reply = ctx.replyWithImage(image);
        if (moment === 'as the reply starts') void oa.close();
        await reply;
      });
      const handled = bot.handle(parseWebhookEvent(JSON.stringify(buildInboundEvent('a picture please'))));
      if (moment === 'while the stream is read') {
        await expect.poll(beingRead, { timeout: 5000, interval: 5 }).toBe(true);
        void oa.close();
      }
      const error = await rejectsWithin(handled, 5000, 'bot.handle');
      expect(replying).toBe(true);
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as Error).message).toMatch(
        moment === 'as the reply starts'
          ? /upload\/image not sent: the client (is closed|was closed while reading)/
          : /upload\/image not sent: the client was closed while reading/,
      );
      // Released by the time the reply settles: a stream that stalls does not outlive its call.
      expect(released()).toBe(true);
      expect(
        mock.requests.filter((r) => r.path.includes('/upload/') || r.path.includes('/webhook/')),
      ).toEqual([]);
      expect(mock.deliveries).toEqual([]);
    });
  });
});
