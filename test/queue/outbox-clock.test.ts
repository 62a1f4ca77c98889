// Sends at a given time (`at`, `delay`) are due by Redis's clock: a worker process whose clock runs
// 60 s fast does not send them early. Against a real redis-server, the fake API and a worker process.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutbox } from '../../src/queue/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import type { OutboxWorkerConfig } from './outbox-worker.js';
import { kill, type Running, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./outbox-worker.ts', import.meta.url));
const AHEAD_MS = 4000;

describe.skipIf(!REDIS_SERVER)('outbox: due times on one clock', () => {
  const shared = useRedisServer();
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of cleanup.splice(0).reverse()) await close();
  });

  it('a worker whose clock runs 60 s fast sends `at` and `delay` jobs no sooner than due by Redis', async () => {
    const mock = await createMockServer();
    cleanup.push(() => mock.close());
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'skewed' });
    cleanup.push(() => outbox.close());
    const config: OutboxWorkerConfig = {
      redisUrl: shared.server.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      name: 'skewed',
      concurrency: 2,
      lockDurationMs: 30_000,
      rateLimit: { general: { max: 100, windowMs: 1000 }, upload: { max: 10, windowMs: 1000 } },
      clockSkewMs: 60_000,
    };
    const redisMs = async () => {
      const [seconds, micros] = (await shared.redis.time()).map(Number);
      return (seconds ?? 0) * 1000 + Math.floor((micros ?? 0) / 1000);
    };
    const attempts = new Map<string, number>();
    outbox.on('delivered', (event) => attempts.set(event.key, event.attempt));
    const atDue = (await redisMs()) + AHEAD_MS;
    await outbox.add('sendText', { user_id: 'u1', msg: 'at' }, { key: 'at', at: new Date(atDue) });
    const delayFrom = await redisMs();
    await outbox.add('sendText', { user_id: 'u1', msg: 'delay' }, { key: 'delay', delay: AHEAD_MS });
    expect(await outbox.counts()).toMatchObject({ delayed: 2 });
    // Started after the count: its fast clock would otherwise have it pick both up (and put them back)
    // while they are counted.
    const worker: Running = await startScript(SCRIPT, [JSON.stringify(config)]);
    cleanup.push(() => kill(worker));

    const states = await outbox.waitFor(['at', 'delay'], { timeoutMs: AHEAD_MS + 15_000, recheckMs: 500 });
    expect(states.get('at')?.state).toBe('delivered');
    expect(states.get('delay')?.state).toBe('delivered');
    // The fake stamps each delivery with this machine's clock, which is Redis's (same host).
    const sentAt = (msg: string) => mock.deliveries.find((d) => d.items[0]?.msg === msg)?.at ?? 0;
    expect(sentAt('at')).toBeGreaterThanOrEqual(atDue - 20);
    expect(sentAt('delay')).toBeGreaterThanOrEqual(delayFrom + AHEAD_MS - 20);
    expect(mock.deliveries).toHaveLength(2);
    // Put back while early, uncounted: each was delivered on its first try.
    await expect.poll(() => Object.fromEntries(attempts), { timeout: 5000 }).toEqual({ at: 1, delay: 1 });
  });
});
