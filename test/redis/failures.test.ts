// A Redis that fails: nothing reached the API, so a send is retried like a refused connection, and
// gives up with deliveryUnknown: false. A closed coordination is not retried at all.
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAClient, type OAClientEvents, OAConnectionError } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from './redis-server.js';

describe.skipIf(!REDIS_SERVER)('a failing Redis', () => {
  let server: RedisServer;
  let mock: MockServer;

  beforeAll(async () => {
    server = await startRedis();
    mock = await createMockServer();
  });
  afterAll(async () => {
    await mock?.close();
    await server?.stop();
  });

  /** A connection whose next `failures` script calls fail, as on a failover or a dropped socket. */
  const flaky = (failures: number) => {
    const redis = redisClient(server.url);
    const evalsha = redis.evalsha.bind(redis);
    let left = failures;
    redis.evalsha = ((...args: Parameters<typeof evalsha>) => {
      if (left-- > 0)
        return Promise.reject(new Error('READONLY You cannot write against a read only replica.'));
      return evalsha(...args);
    }) as typeof redis.evalsha;
    return redis;
  };

  const clientOn = (redis: Redis, maxRetries = 2) => {
    const coordination = createRedisCoordination({ client: redis, prefix: `fail-${Math.random()}:` });
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
      maxRetries,
    });
    const retries: OAClientEvents['retry'][] = [];
    client.on('retry', (event) => retries.push(event));
    return { client, coordination, retries };
  };

  it('retries a send whose Redis call failed, and delivers it once', async () => {
    const redis = flaky(1);
    const { client, coordination, retries } = clientOn(redis);
    const before = mock.deliveries.length;
    try {
      await client.sendText({ user_id: 'user-1', msg: 'after a failover' });
      expect(retries.map((r) => r.reason)).toEqual(['not_sent']);
      expect(retries[0]?.error).toBeInstanceOf(OAConnectionError);
      expect(mock.deliveries.length - before).toBe(1);
    } finally {
      await client.close();
      await coordination.close();
      await redis.quit();
    }
  });

  it('gives up after maxRetries with deliveryUnknown: false, having sent nothing', async () => {
    const redis = flaky(Number.POSITIVE_INFINITY);
    const { client, coordination, retries } = clientOn(redis, 1);
    const before = mock.requests.length;
    try {
      const error = await client.sendText({ user_id: 'user-1', msg: 'never sent' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAConnectionError);
      expect(error).toMatchObject({ deliveryUnknown: false });
      expect((error as Error).message).toContain('Redis coordination failed: READONLY');
      expect(retries.map((r) => r.reason)).toEqual(['not_sent']);
      expect(mock.requests.length - before).toBe(0);
    } finally {
      await client.close();
      await coordination.close();
      await redis.quit();
    }
  });

  it('does not retry once the coordination is closed, even an upload', async () => {
    const redis = redisClient(server.url);
    const { client, coordination, retries } = clientOn(redis);
    await coordination.close();
    try {
      for (const call of [
        () => client.sendText({ user_id: 'user-1', msg: 'too late' }),
        () => client.uploadImage(fileURLToPath(new URL('../fixtures/media/sample.png', import.meta.url))),
      ]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OAConnectionError);
        expect((error as Error).message).toMatch(
          /^Not sent: the (client or its )?Redis coordination is closed/,
        );
      }
      expect(retries).toEqual([]);
    } finally {
      await client.close();
      await redis.quit();
    }
  });
});
