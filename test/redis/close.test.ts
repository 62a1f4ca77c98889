// What oa-messaging/redis opens and closes: nothing at import, everything at close() (but a client of
// yours), and a clear message without ioredis. close() does not stall when Redis is gone (a shutdown
// with a grace period must not wait on a reconnection), and quits cleanly when it is up.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAConnectionError } from '../../src/errors.js';
import { createRedisCoordination, createRedisDedupeStore } from '../../src/redis/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { runScript } from '../helpers/run-script.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from './redis-server.js';

describe.skipIf(!REDIS_SERVER)('closing oa-messaging/redis', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('opens nothing until used, and leaves no timer or socket after close()', async () => {
    const { code, output } = await runScript(new URL('./close-script.ts', import.meta.url), [server.url]);
    expect(output).toContain('after create: handles 0, ioredis loaded false');
    expect(output).toContain('in use: ioredis loaded true');
    expect(output).toContain('queued request: OAConnectionError');
    expect(output).toContain('handles after close: 0');
    expect(code).toBe(0);
  }, 20_000);

  it('leaves a client passed in open', async () => {
    const client = redisClient(server.url);
    const coordination = createRedisCoordination({ client, prefix: 'mine:' });
    await coordination.withRenewalLock('key-1', async () => {});
    await coordination.close();
    await coordination.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    // The lock's release is not awaited by withRenewalLock (a lock left expires by itself); on a
    // cluster, its node may answer after the test's own commands to other nodes.
    await expect.poll(() => client.exists('mine:lock:key-1'), { timeout: 2_000 }).toBe(0);
    await client.quit();
  });

  it('close() settles at once when the redis-server has gone away, with calls waiting on it', async () => {
    const gone = await startRedis();
    const coordination = createRedisCoordination({ url: gone.url });
    const store = createRedisDedupeStore({ url: gone.url });
    await coordination.withRenewalLock('key-2', async () => {});
    expect(await store.claim('m1', 'first', 1_000)).toBe('claimed');
    await gone.stop();
    // Calls made meanwhile wait for a reconnection that will not come; a QUIT would queue behind them.
    const waiting: Promise<unknown>[] = [
      Promise.resolve(coordination.tokenStore.get('key-2')),
      Promise.resolve(store.claim('m2', 'second', 1_000)),
    ];
    // Handled from now on: a call may reject while close() runs, before the checks below reach it.
    for (const call of waiting) call.catch(() => {});
    expect(await settleWithin(coordination.close(), 2_000, 'close() of the coordination')).toMatchObject({
      ok: true,
    });
    expect(await settleWithin(store.close(), 2_000, 'close() of the dedupe store')).toMatchObject({
      ok: true,
    });
    for (const call of waiting) {
      const outcome = await settleWithin(call, 2_000, 'a call waiting on Redis');
      expect(outcome.ok ? outcome.value : outcome.error).toBeInstanceOf(OAConnectionError);
    }
  });

  it('with Redis up, close() quits cleanly: a command sent just before it still gets its answer', async () => {
    const client = redisClient(server.url);
    try {
      const store = createRedisDedupeStore({ url: server.url, prefix: 'quit:' });
      expect(await store.claim('m1', 'first', 60_000)).toBe('claimed');
      // Its script is in Redis's cache, so that it is one command, sent before the QUIT: in the cache of
      // the node that serves m1's key on a cluster too (this key's hash tag is m1's key: the same slot).
      await store.complete('{quit:dedupe:m1}', 'first', 60_000);
      const sentBefore = store.complete('m1', 'first', 60_000);
      await settleWithin(store.close(), 2_000, 'close() with Redis up');
      await expect(sentBefore).resolves.toBeUndefined();
      expect(await client.get('quit:dedupe:m1')).toBe('done');
    } finally {
      await client.quit();
    }
  });
});
