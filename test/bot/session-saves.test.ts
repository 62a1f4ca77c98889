// When a bot writes a session: only when a handler assigned it, or read it and changed it. Counted with
// stores that implement the public `BotSessionStore` over the memory store and over a real
// redis-server, with the bot's replies going to the fake OA server on loopback.
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type BotSessionStore, createBot, MemorySessionStore } from '../../src/bot/index.js';
import { OAClient } from '../../src/index.js';
import { createRedisSessionStore, type RedisSessionStore } from '../../src/redis/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent, type WebhookEvent } from '../../src/webhook/index.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from '../redis/redis-server.js';

/** A session store that counts the writes it passes on to `inner`. */
class CountingStore implements BotSessionStore {
  sets = 0;
  deletes = 0;
  constructor(readonly inner: BotSessionStore) {}
  get(key: string) {
    return this.inner.get(key);
  }
  set(key: string, value: string, ttlMs: number) {
    this.sets++;
    return this.inner.set(key, value, ttlMs);
  }
  delete(key: string) {
    this.deletes++;
    return this.inner.delete(key);
  }
}

const event = (text: string, from: string): WebhookEvent =>
  parseWebhookEvent(JSON.stringify(buildInboundEvent(text, { from })));

let mock: MockServer;
let client: OAClient;
beforeAll(async () => {
  mock = await createMockServer({ rateLimit: false });
  client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
});
afterAll(async () => {
  await client.close();
  await mock.close();
});
beforeEach(() => mock.reset());

/** The cases, over any store: `users` new senders each. */
function sessionSaves(name: string, makeStore: () => BotSessionStore, users: number) {
  describe(`session saves (${name})`, () => {
    const senders = (tag: string) => Array.from({ length: users }, (_, i) => `${tag}${i}`);

    it(`${users} new senders to a handler that never touches ctx.session: nothing written`, async () => {
      const store = new CountingStore(makeStore());
      const bot = createBot({ client, sessions: store });
      let handled = 0;
      bot.use(async (_ctx, next) => {
        await next();
        handled++;
      });
      bot.on('text', () => {});
      for (const from of senders('quiet')) await bot.handle(event('hi', from));
      expect(handled).toBe(users);
      expect({ sets: store.sets, deletes: store.deletes }).toEqual({ sets: 0, deletes: 0 });
    });

    it('a session read but left equal to its initial value is not written; one changed is', async () => {
      const store = new CountingStore(makeStore());
      const bot = createBot<{ count: number; name?: string }>({
        client,
        sessions: store,
        initialSession: () => ({ count: 0 }),
      });
      bot.hears('count', async (ctx) => {
        ctx.session.count++;
        await ctx.reply(`#${ctx.session.count}`);
      });
      bot.hears('same', (ctx) => {
        ctx.session = { count: 0 };
      });
      bot.on('text', async (ctx) => {
        await ctx.reply(`count is ${ctx.session.count}`);
      });
      await bot.handle(event('peek', 'reader'));
      await bot.handle(event('same', 'assigner'));
      expect(store.sets).toBe(0);
      await bot.handle(event('count', 'counter'));
      await bot.handle(event('count', 'counter'));
      await bot.handle(event('peek', 'counter'));
      expect(store.sets).toBe(2);
      expect(mock.deliveries.map((d) => `${d.recipients.join()}: ${String(d.items[0]?.msg)}`)).toEqual([
        'reader: count is 0',
        'counter: #1',
        'counter: #2',
        'counter: count is 2',
      ]);
    });

    it('an assigned session is written, and null deletes a stored one (a new sender has none to delete)', async () => {
      const store = new CountingStore(makeStore());
      const bot = createBot<{ step: string } | null>({ client, sessions: store });
      bot.hears('start', (ctx) => {
        ctx.session = { step: 'asked' };
      });
      bot.hears('stop', (ctx) => {
        ctx.session = null;
      });
      await bot.handle(event('stop', 'newcomer'));
      expect({ sets: store.sets, deletes: store.deletes }).toEqual({ sets: 0, deletes: 0 });
      await bot.handle(event('start', 'asker'));
      await bot.handle(event('start', 'asker'));
      expect(store.sets).toBe(1);
      expect(await store.get('oa_account:asker')).toBe('{"step":"asked"}');
      await bot.handle(event('stop', 'asker'));
      expect(store.deletes).toBe(1);
    });

    it('a write with a fence lower than the last fenced write is refused (false), and changes nothing', async () => {
      const store = makeStore();
      expect(await store.set('fenced', '{"n":8}', 60_000, { fence: 1_800_000_000_000_200 })).toBe(true);
      expect(await store.set('fenced', '{"n":2}', 60_000, { fence: 1_800_000_000_000_100 })).toBe(false);
      expect(await store.delete('fenced', { fence: 1_800_000_000_000_100 })).toBe(false);
      expect(await store.get('fenced')).toBe('{"n":8}');
      expect(await store.set('fenced', '{"n":9}', 60_000, { fence: 1_800_000_000_000_200 })).toBe(true);
      expect(await store.set('fenced', '{"n":10}', 60_000, { fence: 1_800_000_000_000_300 })).toBe(true);
      expect(await store.get('fenced')).toBe('{"n":10}');
    });
  });
}

sessionSaves('memory', () => new MemorySessionStore(), 10_000);

describe.skipIf(!REDIS_SERVER)('in Redis', () => {
  let server: RedisServer;
  let redis: Redis;
  const stores: RedisSessionStore[] = [];
  beforeAll(async () => {
    server = await startRedis();
    redis = redisClient(server.url);
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await redis.quit();
    await server.stop();
  });

  sessionSaves(
    'redis',
    () => {
      const store = createRedisSessionStore({ url: server.url, prefix: `t${stores.length}:` });
      stores.push(store);
      return store;
    },
    300,
  );

  it('no session keys are left in Redis by senders whose handler never touched the session', async () => {
    const store = createRedisSessionStore({ url: server.url, prefix: 'quiet:' });
    stores.push(store);
    const bot = createBot({ client, sessions: store });
    bot.on('text', () => {});
    for (let i = 0; i < 100; i++) await bot.handle(event('hi', `q${i}`));
    expect(await redis.keys('quiet:*')).toEqual([]);
  });
});
