// The outbox's at-most-once guarantee under crashes: 3 worker processes, one killed with SIGKILL about
// every 2 s and started again, redis-server restarted once, two producers adding every key (one of
// them twice), against the fake API enforcing a scaled-down quota.
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { OAConnectionError } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxCounts } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from '../redis/redis-server.js';
import type { OutboxWorkerConfig } from './outbox-worker.js';
import { kill, type Running, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./outbox-worker.ts', import.meta.url));
const KEYS = 2000;
const QUOTA = { max: 40, windowMs: 2000 };
const CONCURRENCY = 4;
const KILL_EVERY_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const keyOf = (i: number) => `campaign-${String(i).padStart(4, '0')}`;

describe.skipIf(!REDIS_SERVER)('outbox chaos', () => {
  let redis: RedisServer | undefined;
  let mock: MockServer | undefined;
  const outboxes: Outbox[] = [];
  const workers = new Set<Running>();

  afterAll(async () => {
    await Promise.all([...workers].map(kill));
    for (const outbox of outboxes) await outbox.close();
    await mock?.close();
    await redis?.stop();
  });

  it('2,000 keyed sends: none delivered twice, none lost, unknown only for sends in flight at a kill, quota used, no 429', async () => {
    redis = await startRedisServer({ appendonly: true });
    mock = await createMockServer({ rateLimit: { general: QUOTA, mode: 'sliding' } });
    const config: OutboxWorkerConfig = {
      redisUrl: redis.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      name: 'chaos',
      concurrency: CONCURRENCY,
      lockDurationMs: 5000,
      rateLimit: { general: QUOTA, upload: { max: 4, windowMs: QUOTA.windowMs } },
    };
    const open = () => {
      const outbox = createOutbox({ connection: { url: redis?.url ?? '' }, name: 'chaos' });
      outboxes.push(outbox);
      return outbox;
    };
    const [producerA, producerB, watcher] = [open(), open(), open()];
    // Every outcome, as the workers report it through Redis to a listener in this process.
    const told: [string, string][] = [];
    for (const name of ['delivered', 'failed', 'unknown'] as const) {
      watcher.on(name, (event) => told.push([event.key, name]));
    }

    for (const running of await Promise.all(
      [0, 1, 2].map(() => startScript(SCRIPT, [JSON.stringify(config)])),
    ))
      workers.add(running);
    const params = (i: number) => ({ user_id: `user-${i % 50}`, msg: `message ${keyOf(i)}` });
    // Producer A: the whole campaign at once. Producer B: every key, twice, one by one.
    const producing = Promise.all([
      producerA.addMany(
        Array.from({ length: KEYS }, (_, i) => ({
          method: 'sendText' as const,
          params: params(i),
          key: keyOf(i),
        })),
      ),
      (async () => {
        for (let i = 0; i < KEYS; i++) {
          await Promise.all([
            producerB.add('sendText', params(i), { key: keyOf(i) }),
            producerB.add('sendText', params(i), { key: keyOf(i) }),
          ]);
        }
      })(),
    ]);

    const killed: number[] = [];
    let restarted = false;
    let backlogEnd: number | undefined;
    let counts: OutboxCounts | undefined;
    const started = Date.now();
    let nextKill = started + KILL_EVERY_MS;
    await producing;
    while (Date.now() - started < 200_000) {
      try {
        counts = await watcher.counts();
      } catch (error) {
        // Producer calls give up on a Redis being restarted (OAConnectionError); the watcher asks again.
        if (!(error instanceof OAConnectionError)) throw error;
        await sleep(250);
        continue;
      }
      if (backlogEnd === undefined && counts.waiting + counts.delayed === 0) backlogEnd = Date.now();
      if (counts.delivered + counts.unknown + counts.failed === KEYS) break;
      if (!restarted && Date.now() - started > 30_000) {
        restarted = true;
        await redis.restart();
      }
      if (Date.now() >= nextKill && backlogEnd === undefined) {
        nextKill = Date.now() + KILL_EVERY_MS;
        const victim = [...workers][Math.floor(Math.random() * workers.size)];
        if (victim) {
          killed.push(victim.child.pid ?? -1);
          workers.delete(victim);
          await kill(victim);
          void startScript(SCRIPT, [JSON.stringify(config)]).then((running) => workers.add(running));
        }
      }
      await sleep(250);
    }

    expect(restarted).toBe(true);
    expect(killed.length).toBeGreaterThanOrEqual(10);
    expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0 });
    // Nothing lost: every key ended delivered, unknown or failed (none failed: the fake refuses nothing).
    const states = new Map<string, string>();
    const unknownBy = new Map<number, number>();
    for (let i = 0; i < KEYS; i++) {
      const status = await watcher.get(keyOf(i));
      states.set(keyOf(i), status?.state ?? 'missing');
      if (status?.state === 'unknown') {
        const pid = status.error?.record?.pid ?? -1;
        unknownBy.set(pid, (unknownBy.get(pid) ?? 0) + 1);
      }
    }
    const tally: Record<string, number> = {};
    for (const state of states.values()) tally[state] = (tally[state] ?? 0) + 1;
    expect(tally.delivered ?? 0).toBe(counts?.delivered);
    expect((tally.delivered ?? 0) + (tally.unknown ?? 0)).toBe(KEYS);

    // No key delivered twice; every delivered key once; an unknown one at most once.
    const sent = new Map<string, number>();
    for (const delivery of mock.deliveries) {
      const key = String(delivery.items[0]?.msg).replace('message ', '');
      sent.set(key, (sent.get(key) ?? 0) + 1);
    }
    expect([...sent.values()].filter((n) => n > 1)).toEqual([]);
    for (const [key, state] of states) {
      if (state === 'delivered') expect(sent.get(key), key).toBe(1);
    }
    // Unknown only for sends in flight in a killed worker: at most its concurrency per kill.
    for (const [pid, n] of unknownBy) {
      expect(killed).toContain(pid);
      expect(n).toBeLessThanOrEqual(CONCURRENCY);
    }

    // The events agree with the record: one outcome per key at most, the state it ended in; only a
    // worker killed between storing an outcome and reporting it leaves one untold.
    // The last outcomes may still be on their way from Redis.
    for (let i = 0; i < 50 && new Set(told.map(([key]) => key)).size < KEYS; i++) await sleep(100);
    const toldOf = new Map<string, string[]>();
    for (const [key, name] of told) toldOf.set(key, [...(toldOf.get(key) ?? []), name]);
    for (const [key, names] of toldOf) expect(names, key).toEqual([states.get(key)]);
    expect(toldOf.size).toBeGreaterThanOrEqual(KEYS - killed.length * CONCURRENCY);

    expect(mock.requests.filter((r) => r.status === 429)).toEqual([]);
    // The quota kept full while there was a backlog: deliveries per window over that span.
    const times = mock.deliveries.map((d) => d.at).sort((a, b) => a - b);
    const first = times[0] ?? 0;
    const end = backlogEnd ?? Date.now();
    const inSpan = times.filter((t) => t <= end).length;
    const perWindow = inSpan / ((end - first) / QUOTA.windowMs);
    console.log(
      JSON.stringify({
        kills: killed.length,
        tally,
        untold: KEYS - toldOf.size,
        unknownBy: Object.fromEntries(unknownBy),
        perWindow,
        quota: QUOTA.max,
        seconds: (end - first) / 1000,
      }),
    );
    expect(perWindow).toBeGreaterThanOrEqual(0.9 * QUOTA.max);
  }, 240_000);
});
