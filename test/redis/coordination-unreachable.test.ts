// The client's Redis coordination while Redis does not answer: a send without a per-call timeoutMs
// still fails within seconds, as OAConnectionError with deliveryUnknown: false, having sent nothing;
// once Redis is back, the same coordination (and client) works again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAClient, OAConfigError, OAConnectionError } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { OUTAGES, outage } from './outages.js';
import { REDIS_SERVER, redisClient, useRedisServer } from './redis-server.js';

/**
 * A send makes three attempts (maxRetries 2), each stopped by the first Redis call that gets no answer
 * within the 2 s bound, with backoffs of at most 0.5 s and 1 s between them: 7.5 s at worst (the
 * figure docs/redis.md gives), and room for a loaded machine.
 */
const REJECTED_WITHIN_MS = 10_000;
/** An `ALL` pause outlasts the longest the test waits on sendText under it: Redis must not answer first. */
const ALL_PAUSE_MS = REJECTED_WITHIN_MS + 2_000;

const msgsOf = (mock: MockServer) => mock.deliveries.map((delivery) => delivery.items[0]?.msg);

describe('createRedisCoordination commandTimeoutMs', () => {
  it('refuses a bound that is not a positive number of ms, at creation', () => {
    for (const commandTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '2000']) {
      expect(() =>
        createRedisCoordination({ url: 'redis://127.0.0.1:1', commandTimeoutMs: commandTimeoutMs as never }),
      ).toThrow(OAConfigError);
    }
  });
});

describe.skipIf(!REDIS_SERVER)('the Redis coordination unreachable', () => {
  const shared = useRedisServer();
  let mock: MockServer;
  let cleanup: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    mock = await createMockServer();
  });
  afterAll(async () => {
    await mock?.close();
  });
  afterEach(async () => {
    // In order: Redis back first, so that nothing left waiting on it holds the closing.
    for (const step of cleanup) await step();
    cleanup = [];
  });

  const clientWith = (coordination: ReturnType<typeof createRedisCoordination>) => {
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
    });
    cleanup.push(
      () => client.close(),
      () => coordination.close(),
    );
    return client;
  };

  it.each(OUTAGES)(
    '%s: sendText rejects with OAConnectionError, deliveryUnknown false, within seconds, nothing sent; works again once Redis is back',
    async (name) => {
      const target = await outage(name, shared.server, shared.redis, { allPauseMs: ALL_PAUSE_MS });
      cleanup.push(() => target.end());
      const client = clientWith(
        createRedisCoordination({ url: target.url, prefix: `down-${Math.random()}:` }),
      );
      if (target.comesBack) await client.sendText({ user_id: 'user-1', msg: `before ${name}` });
      await target.begin();
      const requests = mock.requests.length;
      const deliveries = mock.deliveries.length;

      const started = performance.now();
      const error = await rejectsWithin(
        client.sendText({ user_id: 'user-1', msg: `during ${name}` }),
        REJECTED_WITHIN_MS + 5_000,
        'sendText',
      );
      const ms = performance.now() - started;
      expect(error).toBeInstanceOf(OAConnectionError);
      expect(error).toMatchObject({ deliveryUnknown: false });
      expect((error as Error).message).toMatch(/Redis/);
      expect(ms, 'how long sendText took').toBeLessThan(REJECTED_WITHIN_MS);
      expect(mock.requests.length, 'requests that reached the API').toBe(requests);
      expect(mock.deliveries.length, 'deliveries').toBe(deliveries);

      if (!target.comesBack) return;
      await target.end();
      // The same client and coordination, not made again.
      const after = await settleWithin(
        client.sendText({ user_id: 'user-1', msg: `after ${name}` }),
        15_000,
        'sendText after Redis came back',
      );
      expect(after.ok, String(!after.ok && after.error)).toBe(true);
      expect(msgsOf(mock)).toContain(`after ${name}`);
      expect(msgsOf(mock)).not.toContain(`during ${name}`);
    },
    60_000,
  );

  it('paused, with a client of yours: each call is bounded all the same; close() leaves it open', async () => {
    const target = await outage('paused', shared.server, shared.redis);
    const redis = redisClient(shared.server.url);
    redis.on('error', () => {});
    cleanup.push(() => target.end());
    const coordination = createRedisCoordination({
      client: redis,
      prefix: `down-client-${Math.random()}:`,
      commandTimeoutMs: 500,
    });
    const client = clientWith(coordination);
    cleanup.push(async () => redis.disconnect());
    await client.sendText({ user_id: 'user-1', msg: 'before, own client' });
    await target.begin();
    const requests = mock.requests.length;
    const started = performance.now();
    const error = await rejectsWithin(
      client.sendText({ user_id: 'user-1', msg: 'during' }),
      15_000,
      'sendText',
    );
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error).toMatchObject({ deliveryUnknown: false });
    // Three attempts of 0.5 s, and the backoffs between them.
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(mock.requests.length).toBe(requests);
    await target.end();
    await client.sendText({ user_id: 'user-1', msg: 'after, own client' });
    await coordination.close();
    expect(await redis.ping()).toBe('PONG');
  }, 30_000);
});
