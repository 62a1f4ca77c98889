// The Redis dedupe store against a real redis-server: its states, its expiries, and two webhook
// handlers sharing it (a duplicate on the other instance waits for the first delivery's outcome).
import { afterEach, describe, expect, it } from 'vitest';
import { OAConfigError } from '../../src/errors.js';
import { createRedisDedupeStore, type RedisDedupeStore } from '../../src/redis/index.js';
import {
  createFetchWebhookHandler,
  type FetchWebhookHandler,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { textEvent } from '../webhook/support.js';
import { REDIS_SERVER, redisClient, useRedisServer } from './redis-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createRedisDedupeStore options', () => {
  it('refuses options that cannot work, at creation, and opens nothing', () => {
    expect(() => createRedisDedupeStore(undefined as never)).toThrow(OAConfigError);
    expect(() => createRedisDedupeStore({} as never)).toThrow(/exactly one of url and client/);
    expect(() => createRedisDedupeStore({ url: '' })).toThrow(/Redis URL/);
    expect(() => createRedisDedupeStore({ client: {} as never })).toThrow(/eval and evalsha/);
    expect(() => createRedisDedupeStore({ url: 'redis://x', prefix: 1 as never })).toThrow(/prefix/);
  });
});

describe.skipIf(!REDIS_SERVER)('the Redis dedupe store', () => {
  const shared = useRedisServer();
  let store: RedisDedupeStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('claimed, in-flight, done; a release frees only its own claim', async () => {
    store = createRedisDedupeStore({ url: shared.server.url });
    expect(await store.claim('m1', 'first', 60_000)).toBe('claimed');
    expect(await shared.redis.get('oa:dedupe:m1')).toBe('claim:first');
    expect(await store.claim('m1', 'second', 60_000)).toBe('in-flight');
    await store.release('m1', 'second'); // not its claim
    expect(await store.claim('m1', 'third', 60_000)).toBe('in-flight');
    await store.release('m1', 'first');
    expect(await store.claim('m1', 'fourth', 60_000)).toBe('claimed');
    await store.complete('m1', 'fourth', 5_000);
    expect(await store.claim('m1', 'fifth', 60_000)).toBe('done');
    const ttl = await shared.redis.pttl('oa:dedupe:m1');
    expect(ttl).toBeGreaterThan(4_000);
    expect(ttl).toBeLessThanOrEqual(5_000);
  });

  it('a claim whose holder never ends expires after claimTtlMs', async () => {
    store = createRedisDedupeStore({ url: shared.server.url, prefix: 'app:' });
    expect(await store.claim('m2', 'dead', 50)).toBe('claimed');
    expect(await shared.redis.exists('app:dedupe:m2')).toBe(1);
    await sleep(80);
    expect(await store.claim('m2', 'alive', 50)).toBe('claimed');
  });

  it("extend: only its owner's claim, in one atomic step; a done key is left alone", async () => {
    store = createRedisDedupeStore({ url: shared.server.url });
    expect(await store.claim('m4', 'first', 1_000)).toBe('claimed');
    expect(await store.extend?.('m4', 'other', 60_000)).toBe(false);
    expect(await shared.redis.pttl('oa:dedupe:m4')).toBeLessThanOrEqual(1_000);
    expect(await store.extend?.('m4', 'first', 60_000)).toBe(true);
    expect(await shared.redis.pttl('oa:dedupe:m4')).toBeGreaterThan(50_000);
    expect(await shared.redis.get('oa:dedupe:m4')).toBe('claim:first');
    await store.complete('m4', 'first', 5_000);
    expect(await store.extend?.('m4', 'first', 60_000)).toBe(false);
    expect(await shared.redis.pttl('oa:dedupe:m4')).toBeLessThanOrEqual(5_000);
    expect(await store.extend?.('never-claimed', 'first', 60_000)).toBe(false);
    expect(await shared.redis.exists('oa:dedupe:never-claimed')).toBe(0);
  });

  it('with a client of yours, close() leaves it open', async () => {
    const client = redisClient(shared.server.url);
    try {
      store = createRedisDedupeStore({ client });
      expect(await store.claim('m3', 'x', 1_000)).toBe('claimed');
      await store.close();
      expect(await client.ping()).toBe('PONG');
    } finally {
      await client.quit();
    }
  });

  it('two handlers sharing it: the duplicate on the other one waits, then processes what failed', async () => {
    const stores = [
      createRedisDedupeStore({ url: shared.server.url }),
      createRedisDedupeStore({ url: shared.server.url }),
    ];
    try {
      let release = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const calls: string[] = [];
      const processed: WebhookEvent[] = [];
      const [first, second] = stores.map((instanceStore, index) =>
        createFetchWebhookHandler({
          dedupe: { store: instanceStore, waitTimeoutMs: 5_000 },
          onEvent: async (event) => {
            calls.push(`instance ${index}`);
            if (index === 0) {
              await held;
              throw new Error('instance 0 failed');
            }
            processed.push(event);
          },
        }),
      ) as [FetchWebhookHandler, FetchWebhookHandler];
      const body = JSON.stringify(textEvent('across instances', 77));
      const post = (handler: (r: Request) => Promise<Response>) =>
        handler(new Request('http://x/hook', { method: 'POST', body }));

      const answerA = post(first);
      while (calls.length === 0) await sleep(5);
      const answerB = post(second);
      await sleep(100);
      expect(calls).toEqual(['instance 0']);
      release();
      const [a, b] = await Promise.all([answerA, answerB]);
      expect(a.status).toBe(500);
      expect(b.status).toBe(200);
      expect(await b.json()).toEqual({ ok: true });
      expect(calls).toEqual(['instance 0', 'instance 1']);
      expect(processed).toHaveLength(1);
      expect(await (await post(first)).json()).toEqual({ ok: true, duplicate: true });
    } finally {
      await Promise.all(stores.map((instanceStore) => instanceStore.close()));
    }
  });
});
