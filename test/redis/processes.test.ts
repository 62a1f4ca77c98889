// Many processes, one api key: the fleet shares one token and counts both rate limits together.
import { afterEach, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { startWorker, type Worker } from './fleet.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';
import type { WorkerConfig } from './worker.js';

const TOKEN_PATH = '/api/v2/public/auth/token';
const LIMITS = { general: { max: 20, windowMs: 2000 }, upload: { max: 4, windowMs: 2000 } };

describe.skipIf(!REDIS_SERVER)('many processes share one api key through Redis', () => {
  const shared = useRedisServer();
  let mock: MockServer | undefined;
  let workers: Worker[] = [];

  afterEach(async () => {
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    workers = [];
    await mock?.close();
    mock = undefined;
  });

  const config = (name: string, overrides: Partial<WorkerConfig> = {}): WorkerConfig => ({
    name,
    redisUrl: shared.server.url,
    baseUrl: mock?.url ?? '',
    apiKey: mock?.apiKey ?? '',
    apiSecret: mock?.apiSecret ?? '',
    texts: 25,
    uploads: 2,
    lockTtlMs: 10_000,
    rateLimit: LIMITS,
    ...overrides,
  });

  it('3 workers at once: no 429, one login, every message delivered once, windows kept full', async () => {
    mock = await createMockServer({ rateLimit: LIMITS });
    workers = ['a', 'b', 'c'].map((name) => startWorker(config(name)));
    await Promise.all(workers.map((w) => w.ready));
    for (const worker of workers) worker.go();
    const exits = await Promise.all(workers.map((w) => w.exited));

    for (const exit of exits) {
      expect(exit.code, exit.output).toBe(0);
      expect(exit.result?.failures).toEqual([]);
      expect(exit.result?.ok).toBe(27);
    }
    const requests = mock.requests;
    expect(requests.filter((r) => r.status === 429)).toEqual([]);
    expect(requests.every((r) => r.status === 201)).toBe(true);
    expect(requests.filter((r) => r.path === TOKEN_PATH)).toHaveLength(1);
    expect(requests.filter((r) => r.path.includes('/upload/'))).toHaveLength(6);

    const sent = mock.deliveries.map((d) => JSON.stringify(d.items));
    expect(sent).toHaveLength(75);
    expect(new Set(sent).size).toBe(75);
    for (const name of ['a', 'b', 'c']) {
      for (let i = 0; i < 25; i++) {
        expect(sent).toContain(JSON.stringify([{ type: 'message', msg: `${name} message ${i}` }]));
      }
    }

    // 82 requests at 20 per 2 s: the last one can go no sooner than 8 s after the first. Kept windows
    // full means using at least 0.9 of them, the bar of test/core/rate-limit.timing.test.ts (each slot
    // also waits for its request's latency and the margin, and three child processes share two cores).
    const times = requests.map((r) => r.at).sort((x, y) => x - y);
    const span = (times.at(-1) ?? 0) - (times[0] ?? 0);
    expect(span).toBeGreaterThanOrEqual(8000);
    expect(span).toBeLessThan(8000 / 0.9);
  }, 30_000);

  it('a worker killed while it holds the renewal lock delays the others by at most the lock ttl', async () => {
    mock = await createMockServer();
    mock.injectFault('hang', { path: TOKEN_PATH });
    const lockTtlMs = 2000;
    const lockKey = `oa:lock:${mock.apiKey}@${mock.url}/`;
    workers = ['a', 'b', 'c'].map((name) => startWorker(config(name, { texts: 3, uploads: 0, lockTtlMs })));
    const [holder, ...others] = workers as [Worker, Worker, Worker];
    await Promise.all(workers.map((w) => w.ready));

    holder.go();
    while (!(await shared.redis.exists(lockKey)) || mock.requests.length === 0) await sleep(10);
    for (const worker of others) worker.go();
    // Let the others reach the lock and wait on it.
    await sleep(300);
    expect(mock.requests).toHaveLength(1);

    const killedAt = performance.now();
    holder.child.kill('SIGKILL');
    const exits = await Promise.all(others.map((w) => w.exited));
    const tookMs = performance.now() - killedAt;

    for (const exit of exits) {
      expect(exit.code, exit.output).toBe(0);
      expect(exit.result?.ok).toBe(3);
    }
    expect(tookMs).toBeLessThan(lockTtlMs + 1500);
    const logins = mock.requests.filter((r) => r.path === TOKEN_PATH);
    expect(logins.map((r) => r.outcome)).toEqual(['hang', 'answered']);
    expect(mock.deliveries).toHaveLength(6);
  }, 20_000);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
