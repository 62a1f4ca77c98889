// A Redis that evicts keys (maxmemory-policy other than noeviction) is told once: through the
// coordination's logger, else as a process warning (the outbox, the dedupe store); a Redis that does
// not evict is not mentioned.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createOutbox } from '../../src/queue/index.js';
import { createRedisCoordination, createRedisDedupeStore } from '../../src/redis/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, type RedisServer, startRedis } from './redis-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!REDIS_SERVER)('a Redis that evicts keys', () => {
  let evicting: RedisServer;
  let keeping: RedisServer;
  const closing: { close(): Promise<unknown> }[] = [];
  const warnings: string[] = [];
  const onWarning = (warning: Error) => {
    if (warning.name === 'OARedisWarning') warnings.push(warning.message);
  };

  beforeAll(async () => {
    [evicting, keeping] = await Promise.all([
      startRedis({ args: ['--maxmemory', '100mb', '--maxmemory-policy', 'allkeys-lru'] }),
      startRedis(),
    ]);
    process.on('warning', onWarning);
  });
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
    warnings.length = 0;
  });
  afterAll(async () => {
    process.off('warning', onWarning);
    await Promise.all([evicting?.stop(), keeping?.stop()]);
  });

  const send = async (url: string) => {
    const lines: string[] = [];
    const mock = await createMockServer();
    const coordination = createRedisCoordination({ url, logger: { warn: (line) => lines.push(line) } });
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
    });
    closing.push(mock, coordination, client);
    for (let i = 0; i < 3; i++)
      expect(await client.sendText({ user_id: 'u1', msg: `hi ${i}` })).toBe('success');
    return lines;
  };

  it('the coordination warns once through its logger, naming the policy and the fix', async () => {
    // The check runs beside the first command: its warning comes when its answer does.
    const warned = await send(evicting.url);
    await expect
      .poll(() => warned, { timeout: 5_000 })
      .toEqual([
        'oa-messaging: the Redis of the Redis coordination evicts keys under memory pressure (maxmemory-policy allkeys-lru): what it keeps there (tokens, locks, claims, queued jobs) may vanish; set maxmemory-policy noeviction',
      ]);
    const quiet = await send(keeping.url);
    await sleep(200);
    expect(quiet).toEqual([]);
  });

  it('the outbox and the dedupe store warn once each, as a process warning', async () => {
    for (const url of [evicting.url, keeping.url]) {
      const outbox = createOutbox({ connection: { url } });
      const dedupe = createRedisDedupeStore({ url });
      closing.push(outbox, dedupe);
      await outbox.add('sendText', { user_id: 'u1', msg: 'a' }, { key: 'a' });
      await outbox.add('sendText', { user_id: 'u1', msg: 'b' }, { key: 'b' });
      await outbox.counts();
      await dedupe.claim('m1', 'x', 1_000);
      await dedupe.claim('m2', 'x', 1_000);
    }
    await expect.poll(() => warnings.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    // And no more: none of the Redis that keeps its keys.
    await sleep(200);
    expect(warnings.sort()).toEqual([
      expect.stringMatching(/^oa-messaging: the Redis of the outbox evicts keys .*allkeys-lru/),
      expect.stringMatching(/^oa-messaging: the Redis of the webhook dedupe store evicts keys .*allkeys-lru/),
    ]);
  });
});
