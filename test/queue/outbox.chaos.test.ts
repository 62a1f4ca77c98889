// The outbox's at-most-once guarantee under crashes: 3 worker processes, one killed with SIGKILL about
// every 2 s and started again, redis-server restarted once, two producers adding every key (one of
// them twice), against the fake API enforcing a scaled-down quota. Then workers killed while their
// client waits inside a call (a 429's Retry-After, JOB_BUSY, a video still converting): those jobs are
// sent by the next worker, none ends unknown.
import { fileURLToPath } from 'node:url';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import { OAClient, OAConnectionError } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxCounts } from '../../src/queue/index.js';
import { createMockServer, type MockServer, type RecordedRequest } from '../../src/testing/index.js';
import {
  ON_CLUSTER,
  REDIS_SERVER,
  type RedisServer,
  redisClient,
  startRedis,
} from '../redis/redis-server.js';
import type { OutboxWorkerConfig } from './outbox-worker.js';
import { kill, pause, type Running, resume, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./outbox-worker.ts', import.meta.url));
const CLIP = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));
const KEYS = 2000;
const QUOTA = { max: 80, windowMs: 2000 };
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
    redis = await startRedis({ appendonly: true });
    mock = await createMockServer({ rateLimit: { general: QUOTA, mode: 'sliding' } });
    const config: OutboxWorkerConfig = {
      redisUrl: redis.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      name: 'chaos',
      concurrency: CONCURRENCY,
      // Longer than the Redis restart below takes, so that no lock runs out meanwhile: a Redis
      // Cluster's takes seconds (a rebooted master waits 2 s before it takes writes again).
      lockDurationMs: ON_CLUSTER ? 10_000 : 5000,
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
      // A victim only while all three run: a replacement slow to start (a loaded machine) is waited
      // for, so that the kills do not outpace the starts and leave no worker to do the work.
      if (Date.now() >= nextKill && backlogEnd === undefined && workers.size === 3) {
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

  it('workers killed during 429, JOB_BUSY and transcode waits: each key delivered once, none unknown', async ({
    onTestFinished,
  }) => {
    const run = await startWaitsRun(onTestFinished);
    const { mock, outbox, keys } = run;
    const kills: Record<Wait, number> = { rate_limited: 0, job_busy: 0, converting: 0 };
    const started = Date.now();
    let counts: OutboxCounts | undefined;
    while (Date.now() - started < 90_000) {
      counts = await outbox.counts();
      if (counts.delivered + counts.unknown + counts.failed === keys.length) break;
      if (Date.now() - started < 40_000) {
        for (const victim of run.workers) {
          const pid = victim.child.pid ?? -1;
          const wait = waitingOn(mock.requests, pid, Date.now());
          if (!wait || kills[wait] >= 3) continue;
          // Frozen, then its log at the fake is final: killed only if it was inside that wait when
          // frozen, else let go on.
          const pausedAt = Date.now();
          pause(victim);
          await sleep(40);
          // And only if no job of it carries its may-have-left record: frozen between writing it and
          // its request leaving (a busy machine), it would end `unknown`, rightly, though never sent.
          if (waitingOn(mock.requests, pid, pausedAt) === wait && !(await recordedBy(run.redis, pid))) {
            kills[wait]++;
            run.workers.delete(victim);
            await kill(victim);
            void run.startWorker();
          } else resume(victim);
          break;
        }
      }
      await sleep(50);
    }
    expect(counts).toMatchObject({ waiting: 0, delayed: 0, active: 0, failed: 0 });
    expect(kills.rate_limited, JSON.stringify(kills)).toBeGreaterThanOrEqual(1);
    expect(kills.job_busy, JSON.stringify(kills)).toBeGreaterThanOrEqual(1);
    expect(kills.converting, JSON.stringify(kills)).toBeGreaterThanOrEqual(1);

    const sent = new Map<string, number>();
    for (const d of mock.deliveries) {
      const key = d.user_ids[0] ?? String(d.items[0]?.msg);
      sent.set(key, (sent.get(key) ?? 0) + 1);
    }
    const states: Record<string, string | undefined> = {};
    for (const key of keys) states[key] = (await outbox.get(key))?.state;
    // No key delivered twice; no key that the fake never delivered ends unknown (none was in flight at
    // a kill); every key delivered.
    expect([...sent].filter(([, n]) => n > 1)).toEqual([]);
    expect(keys.filter((key) => states[key] === 'unknown' && !sent.has(key))).toEqual([]);
    expect(keys.filter((key) => states[key] !== 'delivered' || sent.get(key) !== 1)).toEqual([]);
    console.log(JSON.stringify({ kills, seconds: (Date.now() - started) / 1000 }));
  }, 120_000);
});

/**
 * Whether a job not ended carries a may-have-left record of the worker `pid` (the outbox's record of
 * each job, `oa:job:<id>`): while that worker is frozen its records cannot change.
 */
async function recordedBy(redis: Redis | Cluster, pid: number): Promise<boolean> {
  // On a Redis Cluster, every node's keys (the queue's are on one of them).
  const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
  const keys = (await Promise.all(nodes.map((node) => node.keys('bull:*waits*:oa:job:*')))).flat();
  for (const key of keys) {
    const [sent, end] = await redis.hmget(key, 'sent', 'end');
    if (sent && !end && (JSON.parse(sent) as { pid?: number }).pid === pid) return true;
  }
  return false;
}

/** What a worker's client waits on between two attempts. */
type Wait = 'rate_limited' | 'job_busy' | 'converting';

/** The shortest wait after each: the 429s say `Retry-After: 2`; the others back off at least 500 ms. */
const MIN_WAIT_MS: Record<Wait, number> = { rate_limited: 2000, job_busy: 500, converting: 500 };
/** Its answer handled (the record cleared) this long after the fake answered. */
const HANDLED_MS = 200;

/**
 * What the worker `pid` (concurrency 1) was waiting on at `at`, judged from the fake's log: its last
 * request was refused (so its record is cleared, and the next has not left) long enough before for
 * the answer to be handled, and not so long that the wait may have been over. `undefined`: it may
 * have been sending.
 */
function waitingOn(requests: readonly RecordedRequest[], pid: number, at: number): Wait | undefined {
  const mine = requests.filter(
    (r) => r.headers['x-outbox-worker'] === String(pid) && !r.path.includes('/auth/'),
  );
  const last = mine[mine.length - 1];
  if (last?.outcome !== 'answered') return undefined;
  const wait: Wait | undefined =
    last.status === 429
      ? 'rate_limited'
      : last.code === 'JOB_BUSY'
        ? 'job_busy'
        : last.status === 400 && last.path.endsWith('/broadcast-video')
          ? 'converting'
          : undefined;
  if (!wait) return undefined;
  const since = at - (last.at + (last.durationMs ?? 0));
  return since >= HANDLED_MS && since <= MIN_WAIT_MS[wait] - 100 ? wait : undefined;
}

/**
 * A run whose sends wait inside their calls: texts answered 429 with `Retry-After: 2`, group broadcasts
 * one at a time (`JOB_BUSY` for the others), videos converting for 10 s. Four workers of concurrency 1,
 * each request marked with its worker's pid.
 */
async function startWaitsRun(onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const redis = await startRedis();
  onTestFinished(() => redis.stop());
  const commands = redisClient(redis.url, { maxRetriesPerRequest: null });
  onTestFinished(async () => {
    await commands.quit();
  });
  const mock = await createMockServer({ rateLimit: false, broadcastJobMs: 2500, transcodeMs: 10_000 });
  onTestFinished(() => mock.close());
  const outbox = createOutbox({ connection: { url: redis.url }, name: 'waits' });
  onTestFinished(() => outbox.close());
  const uploader = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  onTestFinished(() => uploader.close());
  mock.injectFault(
    { kind: 'rate-limit', retryAfterSeconds: 2 },
    { path: '/webhook/broadcast-message', times: 16 },
  );
  const keys: string[] = [];
  const entries = [];
  for (let i = 0; i < 6; i++) {
    const { ticket_id } = await uploader.uploadVideo(CLIP);
    entries.push(
      { method: 'sendVideo' as const, params: { user_id: `video-${i}`, ticket_id }, key: `video-${i}` },
      {
        method: 'broadcastToGroup' as const,
        params: {
          account_provider_group_id: '5b0e8f4a-1c2d-4e3f-8a9b-0c1d2e3f4a5b',
          items: [{ type: 'message' as const, msg: `group-${i}` }],
        },
        key: `group-${i}`,
      },
      { method: 'sendText' as const, params: { user_id: `text-${i}`, msg: 'hello' }, key: `text-${i}` },
    );
  }
  for (const entry of entries) keys.push(entry.key);
  await outbox.addMany(entries);
  const config: OutboxWorkerConfig = {
    redisUrl: redis.url,
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
    name: 'waits',
    concurrency: 1,
    lockDurationMs: 2000,
    rateLimit: { general: { max: 200, windowMs: 1000 }, upload: { max: 20, windowMs: 1000 } },
    tag: true,
  };
  const workers = new Set<Running>();
  let finished = false;
  onTestFinished(async () => {
    finished = true;
    await Promise.all([...workers].map(kill));
  });
  const startWorker = async () => {
    const running = await startScript(SCRIPT, [JSON.stringify(config)]);
    // A replacement that came up after the test ended is not left running.
    if (finished) await kill(running);
    else workers.add(running);
  };
  await Promise.all([0, 1, 2, 3].map(startWorker));
  return { mock, outbox, keys, workers, startWorker, redis: commands };
}
