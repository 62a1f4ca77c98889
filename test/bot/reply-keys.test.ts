// The outbox keys of a bot's replies, against the fake OA server on loopback and a real redis-server:
// each event the webhook's dedupe tells apart gets replies of its own, delivered once each.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { OAClient } from '../../src/index.js';
import { createOutbox } from '../../src/queue/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent, type WebhookEvent } from '../../src/webhook/index.js';
import { REDIS_SERVER, type RedisServer, startRedis } from '../redis/redis-server.js';

async function until(done: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

describe.skipIf(!REDIS_SERVER)('reply keys', () => {
  let server: RedisServer;
  let mock: MockServer;
  let client: OAClient;
  let queues = 0;

  beforeAll(async () => {
    server = await startRedis();
    mock = await createMockServer({ rateLimit: false });
    client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  });
  beforeEach(() => mock.reset());
  afterAll(async () => {
    await client.close();
    await mock.close();
    await server.stop();
  });

  /** Handles `events` with a bot whose replies go through an outbox; resolves with the keys it used. */
  async function answer(events: WebhookEvent[], expected: number): Promise<string[]> {
    const outbox = createOutbox({ connection: { url: server.url }, name: `reply-keys-${++queues}` });
    const keys: string[] = [];
    outbox.on('delivered', (e) => void keys.push(e.key));
    const bot = createBot({ client, outbox });
    bot.on('text', async (ctx) => {
      await ctx.reply(`hello ${ctx.from}`);
      await ctx.reply(`bye ${ctx.from}`);
    });
    const worker = outbox.work({ client });
    try {
      for (const event of events) await bot.handle(event);
      await until(() => mock.deliveries.length >= expected, 15_000);
      // Each delivery's 'delivered' event comes once its job has completed and the event stream is read.
      await until(() => keys.length >= mock.deliveries.length, 10_000);
      return keys;
    } finally {
      await worker.close();
      await outbox.close();
    }
  }

  const sameMessage = { msgSeq: 7, msgRandom: 4242, msgTime: 1_800_000_000 };
  const replies = () => mock.deliveries.map((d) => `${d.recipients.join()}: ${String(d.items[0]?.msg)}`);

  it('two senders with the same MsgKey are two events: each gets its replies', async () => {
    const events = ['ann', 'bob'].map((from) =>
      parseWebhookEvent(JSON.stringify(buildInboundEvent('hi', { from, ...sameMessage }))),
    );
    const msgKeys = events.map((e) => (e.data as { MsgKey?: string }).MsgKey);
    expect(msgKeys[0]).toBe(msgKeys[1]);
    const keys = await answer(events, 4);
    expect(replies().sort()).toEqual(['ann: bye ann', 'ann: hello ann', 'bob: bye bob', 'bob: hello bob']);
    expect(new Set(keys).size).toBe(4);
  });

  it('one sender writing to two OA accounts, with the same MsgKey: replies of their own', async () => {
    const events = [
      buildInboundEvent('hi', { from: 'cat', to: 'oa_one', ...sameMessage }),
      buildInboundEvent('hi', { from: 'cat', to: 'oa_two', ...sameMessage }),
    ].map((body) => parseWebhookEvent(JSON.stringify(body)));
    await answer(events, 4);
    expect(replies().sort()).toEqual(['cat: bye cat', 'cat: bye cat', 'cat: hello cat', 'cat: hello cat']);
  });

  it('the same event handled twice (a redelivery) adds the same keys: replied once', async () => {
    const body = JSON.stringify(buildInboundEvent('hi', { from: 'dan', ...sameMessage }));
    await answer([parseWebhookEvent(body), parseWebhookEvent(body)], 2);
    expect(replies().sort()).toEqual(['dan: bye dan', 'dan: hello dan']);
  });
});
