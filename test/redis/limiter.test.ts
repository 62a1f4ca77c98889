// The shared limiter against a real redis-server: each coordination is a connection of its own, as a
// separate process would have.
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import type { Limiter, Permit } from '../../src/core/rate-limit.js';
import { OAAbortError, OAConnectionError } from '../../src/index.js';
import { createRedisCoordination, type RedisCoordination } from '../../src/redis/index.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

const KEY = 'limiter-test-key';
const GENERAL = `oa:limit:{${KEY}}:general`;
const UPLOAD = `oa:limit:{${KEY}}:upload`;

describe.skipIf(!REDIS_SERVER)('the shared rate limiter', () => {
  const shared = useRedisServer();
  let open: RedisCoordination[] = [];

  afterEach(async () => {
    await Promise.all(open.map((c) => c.close()));
    open = [];
  });

  /** A limiter in a "process" of its own. */
  const limiter = (general: [number, number], upload: [number, number] = [100, 1000], lease = 30_000) => {
    const coordination = createRedisCoordination({ url: shared.server.url, inFlightLeaseMs: lease });
    open.push(coordination);
    return coordination.createLimiter(KEY, {
      general: { max: general[0], windowMs: general[1] },
      upload: { max: upload[0], windowMs: upload[1] },
    });
  };

  const take = async (l: Limiter, bucket: 'general' | 'upload' = 'general', signal?: AbortSignal) => {
    const permit = await l.acquire(bucket, { signal });
    return { permit, at: performance.now() };
  };

  it('lets a burst of max go at once, and the next request one window after the first ended', async () => {
    const a = limiter([5, 400]);
    const b = limiter([5, 400]);
    const start = performance.now();
    const burst = await Promise.all([take(a), take(a), take(b), take(b), take(b)]);
    for (const { permit, at } of burst) {
      // At once: none waited, and all came sooner than a window (the time includes the connections'
      // setup, which on a loaded machine running a Redis Cluster passed 150 ms).
      expect(at - start).toBeLessThan(400);
      expect(permit.waitedMs).toBe(0);
    }
    const endedAt = performance.now();
    for (const { permit } of burst) permit.ended();
    const next = await take(a);
    expect(next.at - endedAt).toBeGreaterThanOrEqual(400);
    expect(next.at - endedAt).toBeLessThan(700);
    expect(next.permit.waitedMs).toBeGreaterThan(0);
  });

  it('keeps every window of two processes at or under max, and the windows full', async () => {
    const [max, windowMs] = [4, 300];
    const limiters = [limiter([max, windowMs]), limiter([max, windowMs])];
    const grants: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const { permit, at } = await take(limiters[i % 2] as Limiter);
        grants.push(at);
        setTimeout(() => permit.ended(), 5);
      }),
    );
    grants.sort((x, y) => x - y);
    for (let i = max; i < grants.length; i++) {
      expect((grants[i] as number) - (grants[i - max] as number)).toBeGreaterThanOrEqual(windowMs);
    }
    // 20 requests at 4 per 300 ms: the last goes 4 windows after the first, plus latency and margins.
    const span = (grants.at(-1) as number) - (grants[0] as number);
    expect(span).toBeLessThan(4 * windowMs + 4 * 60);
  });

  it('counts an upload in both windows, checked at once', async () => {
    const a = limiter([3, 5000], [1, 5000]);
    const upload = await take(a, 'upload');
    // The upload window is full; general requests still go.
    await take(a);
    let second: Permit | undefined;
    const waiting = Promise.resolve(a.acquire('upload')).then((p) => {
      second = p;
    });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(second).toBeUndefined();
    expect(await shared.redis.zcard(UPLOAD)).toBe(1);
    expect(await shared.redis.zcard(GENERAL)).toBe(2);
    // Releasing the first upload (not sent after all) frees both its slots at once.
    upload.permit.release();
    await waiting;
    expect(await shared.redis.zcard(UPLOAD)).toBe(1);
    expect(await shared.redis.zcard(GENERAL)).toBe(2);
  });

  it('stops waiting with OAAbortError when the signal fires, and takes no slot', async () => {
    const a = limiter([1, 10_000]);
    await take(a);
    const controller = new AbortController();
    const waiting = Promise.resolve(a.acquire('general', { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('caller gave up')), 50);
    const started = performance.now();
    const error = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAAbortError);
    // Ended by the signal at 50 ms, not by the slot coming back 10 s on (the margin is for a loaded machine).
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(await shared.redis.zcard(GENERAL)).toBe(1);
    // An already aborted signal rejects at once.
    await expect(a.acquire('general', { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(OAAbortError);
  });

  it('adds one abort listener for any number of queued requests sharing a signal', async () => {
    const a = limiter([1, 10_000]);
    const held = await take(a);
    const giveUp = new AbortController();
    const queued = Array.from({ length: 100 }, () =>
      Promise.resolve(a.acquire('general', { signal: giveUp.signal })).catch((e: unknown) => e),
    );
    expect(getEventListeners(giveUp.signal, 'abort')).toHaveLength(1);
    giveUp.abort();
    const errors = await Promise.all(queued);
    expect(errors.every((e) => e instanceof OAAbortError)).toBe(true);
    expect(getEventListeners(giveUp.signal, 'abort')).toHaveLength(0);
    // Granted requests take their listener with them too.
    const signal = new AbortController().signal;
    const granted = Array.from({ length: 3 }, () => Promise.resolve(a.acquire('general', { signal })));
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    held.permit.release();
    for (const pending of granted) (await pending).release();
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('rejects queued requests with OAConnectionError on stop()', async () => {
    const a = limiter([1, 10_000]);
    await take(a);
    const waiting = a.acquire('general');
    a.stop();
    await expect(waiting).rejects.toBeInstanceOf(OAConnectionError);
    await expect(a.acquire('general')).rejects.toBeInstanceOf(OAConnectionError);
  });

  it('keeps the slot of a request that runs longer than its lease while its process renews it', async () => {
    const a = limiter([1, 200], [1, 200], 300);
    const b = limiter([1, 200], [1, 200], 300);
    const long = await take(a);
    let got = false;
    const waiting = take(b).then((t) => {
      got = true;
      return t;
    });
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(got).toBe(false);
    const endedAt = performance.now();
    long.permit.ended();
    const next = await waiting;
    expect(next.at - endedAt).toBeGreaterThanOrEqual(200);
  });

  it('gives back the slots of a process that died mid-request after its lease and one window', async () => {
    const lease = 300;
    const a = limiter([1, 200], [1, 200], lease);
    const b = limiter([1, 200], [1, 200], lease);
    await take(a);
    // The process "dies": no more renewals, no ended().
    const diedAt = performance.now();
    await open[0]?.close();
    const next = await take(b);
    expect(next.at - diedAt).toBeGreaterThanOrEqual(lease + 200 - 50);
    expect(next.at - diedAt).toBeLessThan(lease + 200 + 1200);
  });
});
