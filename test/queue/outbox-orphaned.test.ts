// A worker process killed (SIGKILL) mid-send with a short lockDurationMs: once its lock has expired
// its job is `orphaned` (not `active`) in counts(), get() and `outbox.on('orphaned')`, and another worker
// takes it within lockDurationMs of the kill, ending it `unknown` (its request may have left).
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createOutbox, type OutboxOrphanedEvent } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import type { OutboxWorkerConfig } from './outbox-worker.js';
import { kill, type Running, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./outbox-worker.ts', import.meta.url));
const LOCK_MS = 3000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_SERVER)(
  'outbox: a dead worker’s job is orphaned, then taken within lockDurationMs',
  () => {
    const shared = useRedisServer();
    const workers = new Set<Running>();
    const cleanup: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      await Promise.all([...workers].map(kill));
      workers.clear();
      for (const close of cleanup.splice(0).reverse()) await close();
    });

    const setUp = async (name: string) => {
      const mock: MockServer = await createMockServer();
      cleanup.push(() => mock.close());
      // The send is held by the fake: the worker dies with its request in flight.
      mock.injectFault({ kind: 'hang' }, { path: '/webhook/broadcast-message', times: 1 });
      const config: OutboxWorkerConfig = {
        redisUrl: shared.server.url,
        baseUrl: mock.url,
        apiKey: mock.apiKey,
        apiSecret: mock.apiSecret,
        name,
        concurrency: 1,
        lockDurationMs: LOCK_MS,
        rateLimit: { general: { max: 100, windowMs: 1000 }, upload: { max: 10, windowMs: 1000 } },
      };
      const outbox = createOutbox({ connection: { url: shared.server.url }, name });
      cleanup.push(() => outbox.close());
      const start = async () => {
        const running = await startScript(SCRIPT, [JSON.stringify(config)]);
        workers.add(running);
        return running;
      };
      const first = await start();
      await outbox.add('sendText', { user_id: 'u1', msg: 'in flight' }, { key: 'k' });
      await expect
        .poll(() => mock.requests.filter((r) => r.path.endsWith('/webhook/broadcast-message')).length, {
          timeout: 10_000,
        })
        .toBe(1);
      expect(await outbox.counts()).toMatchObject({ active: 1 });
      expect(await outbox.get('k')).toEqual({ state: 'active' });
      return { outbox, first, start };
    };

    it('counts() and get() tell the orphaned job from live ones; the next worker takes it and says so', async () => {
      const { outbox, first, start } = await setUp('orphans');
      const heard: OutboxOrphanedEvent[] = [];
      outbox.on('orphaned', (event) => heard.push(event));
      await kill(first);
      // No worker runs now: once the lock is gone the job stays orphaned until one comes.
      await expect
        .poll(() => outbox.counts(), { timeout: LOCK_MS + 2000, interval: 100 })
        .toMatchObject({ active: 0, orphaned: 1 });
      expect(await outbox.get('k')).toEqual({ state: 'orphaned' });
      await sleep(500);
      expect(await outbox.counts()).toMatchObject({ active: 0, orphaned: 1, waiting: 0 });

      await start();
      const states = await outbox.waitFor(['k'], { timeoutMs: LOCK_MS + 5000, recheckMs: 200 });
      expect(states.get('k')?.state).toBe('unknown');
      await expect.poll(() => heard.length, { timeout: 5000 }).toBe(1);
      expect(heard[0]).toEqual({ key: 'k', method: 'sendText', attempt: 1 });
      const counts = await outbox.counts();
      expect(counts).toMatchObject({ active: 0, unknown: 1 });
      expect(counts.orphaned ?? 0).toBe(0);
    });

    it('with another worker running, the job is taken within lockDurationMs of the kill', async () => {
      const { outbox, first, start } = await setUp('orphans-live');
      await start();
      const killedAt = performance.now();
      await kill(first);
      let endedAt: number | undefined;
      for (let i = 0; i < 100 && endedAt === undefined; i++) {
        if ((await outbox.get('k'))?.state === 'unknown') endedAt = performance.now();
        else await sleep(100);
      }
      expect(endedAt).toBeDefined();
      // The bound docs/outbox.md states, with room for the polling and a loaded machine.
      expect((endedAt ?? Number.POSITIVE_INFINITY) - killedAt).toBeLessThan(LOCK_MS + 700);
    });
  },
);
