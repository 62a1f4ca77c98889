// The in-process rate limiter on its own, with real timers and small windows: what it grants, in
// which order, and that no span of a window ever holds more than `max` requests.
import { getEventListeners } from 'node:events';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { type Permit, RateLimiter } from '../../src/core/rate-limit.js';
import { OAAbortError, OAConnectionError } from '../../src/index.js';

type Bucket = 'general' | 'upload';

const started: RateLimiter[] = [];
afterEach(() => {
  for (const limiter of started.splice(0)) limiter.stop();
});

function limiter(general: [number, number], upload: [number, number] = [100, 60_000]): RateLimiter {
  const l = new RateLimiter({
    general: { max: general[0], windowMs: general[1] },
    upload: { max: upload[0], windowMs: upload[1] },
  });
  started.push(l);
  return l;
}

const isPromise = (value: unknown): value is Promise<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

/** A permit granted at once, or a failure naming what came back instead. */
function now(value: Permit | Promise<Permit>): Permit {
  if (isPromise(value)) throw new Error('expected a permit at once, got a promise');
  return value;
}

/** Queues a request and records the order in which the queued ones are granted. */
function queue(l: RateLimiter, order: string[], name: string, bucket: Bucket = 'general', first = false) {
  const pending = l.acquire(bucket, { first });
  expect(isPromise(pending)).toBe(true);
  return Promise.resolve(pending).then((permit) => {
    order.push(name);
    return permit;
  });
}

/** Releases each queued permit as soon as it is granted, which grants the next, until all are. */
async function releaseAll(pending: readonly Promise<Permit>[]): Promise<void> {
  await Promise.all(pending.map(async (permit) => (await permit).release()));
}

/** A request as a server sees it: it counts somewhere between its grant and its end. */
interface Sent {
  bucket: Bucket;
  granted: number;
  ended: number;
}

/**
 * The most requests any span of `windowMs` can hold, wherever in [granted, ended] the server counts
 * each: for a span starting at `t`, every request that ends at or after `t` and was granted before
 * `t + windowMs`. The worst span starts at some request's end.
 */
function worstSpan(sent: readonly Sent[], windowMs: number): number {
  let worst = 0;
  for (const { ended: t } of sent) {
    const inSpan = sent.filter((s) => s.ended >= t && s.granted < t + windowMs).length;
    worst = Math.max(worst, inSpan);
  }
  return worst;
}

/** Takes a slot, holds it `holdMs`, then ends it (or releases it, unsent) and records it. */
async function use(l: RateLimiter, bucket: Bucket, holdMs: number, send: boolean, sent: Sent[]) {
  const asked = performance.now();
  const permit = await l.acquire(bucket);
  const granted = asked + permit.waitedMs;
  if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
  if (!send) {
    permit.release();
    return;
  }
  const ended = performance.now();
  permit.ended();
  sent.push({ bucket, granted, ended });
}

describe('the in-process rate limiter', () => {
  it('grants a free slot synchronously: a Permit, not a promise', () => {
    const l = limiter([2, 1000], [1, 1000]);
    const general = now(l.acquire('general'));
    expect(general.waitedMs).toBe(0);
    const upload = now(l.acquire('upload', { signal: new AbortController().signal }));
    expect(upload.waitedMs).toBe(0);
    // Both general slots are taken now: the next request queues.
    const queued = l.acquire('general');
    expect(isPromise(queued)).toBe(true);
    (queued as Promise<Permit>).catch(() => {});
    general.release();
    upload.release();
  });

  it('grants queued requests in the order they came (FIFO), one released slot each', async () => {
    const l = limiter([1, 60_000]);
    const held = now(l.acquire('general'));
    const order: string[] = [];
    const waiting = ['a', 'b', 'c', 'd', 'e'].map((name) => queue(l, order, name));
    held.release();
    await releaseAll(waiting);
    expect(order).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('puts a `first` request ahead of every queued one, FIFO among the first', async () => {
    const l = limiter([1, 60_000]);
    const held = now(l.acquire('general'));
    const order: string[] = [];
    const waiting = [
      queue(l, order, 'send-1'),
      queue(l, order, 'send-2'),
      queue(l, order, 'token', 'general', true),
      queue(l, order, 'send-3'),
      queue(l, order, 'replay', 'general', true),
    ];
    held.release();
    await releaseAll(waiting);
    expect(order).toEqual(['token', 'replay', 'send-1', 'send-2', 'send-3']);
  });

  it('does not deadlock when queued sends hold every slot and give them back to wait for a token', async () => {
    const l = limiter([2, 60_000]);
    const holders = [now(l.acquire('general')), now(l.acquire('general'))];
    const order: string[] = [];
    const backlog = Array.from({ length: 10 }, (_, i) => queue(l, order, `send-${i}`));
    // The token call queues behind the full window; the two holders give their slots back.
    const token = queue(l, order, 'token', 'general', true);
    for (const permit of holders) permit.release();
    (await token).ended();
    // They come back for their slots, ahead of the backlog (send-0 got the second slot meanwhile).
    const again = [
      queue(l, order, 'holder-1', 'general', true),
      queue(l, order, 'holder-2', 'general', true),
    ];
    await releaseAll([...backlog, ...again]);
    expect(order).toEqual([
      'token',
      'send-0',
      'holder-1',
      'holder-2',
      ...Array.from({ length: 9 }, (_, i) => `send-${i + 1}`),
    ]);
  });

  it('lets an upload that holds its upload slot go ahead of queued requests for its general slot', async () => {
    const l = limiter([1, 60_000], [1, 60_000]);
    const held = now(l.acquire('general'));
    const order: string[] = [];
    const sends = [queue(l, order, 'send-1'), queue(l, order, 'send-2')];
    // The upload window is free: the upload takes its slot there and waits for a general one.
    const upload = queue(l, order, 'upload', 'upload');
    // A second upload waits for the upload slot the first holds.
    const upload2 = queue(l, order, 'upload-2', 'upload');
    held.release();
    await releaseAll([upload, ...sends, upload2]);
    // Each upload, once it holds its upload slot, is next for a general one.
    expect(order).toEqual(['upload', 'upload-2', 'send-1', 'send-2']);
  });

  it('rejects a queued request whose signal fires, and one listener serves every call sharing a signal', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const l = limiter([1, 60_000], [1, 60_000]);
      const held = now(l.acquire('general'));
      const shared = new AbortController();
      const queued = Array.from({ length: 100 }, () => l.acquire('general', { signal: shared.signal }));
      const other = l.acquire('general');
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
      shared.abort(new Error('caller gave up'));
      const errors = await Promise.all(queued.map((p) => Promise.resolve(p).catch((e: unknown) => e)));
      expect(errors.every((e) => e instanceof OAAbortError)).toBe(true);
      expect((errors[0] as Error).message).toBe('Aborted while waiting for the rate limit');
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
      // They left the queue: the next slot goes to the request queued after them.
      held.release();
      (await other).release();

      // Granted ones take their listener with them too.
      const next = now(l.acquire('general'));
      const signal = new AbortController().signal;
      const granted = Array.from({ length: 100 }, () => Promise.resolve(l.acquire('general', { signal })));
      expect(getEventListeners(signal, 'abort')).toHaveLength(1);
      next.release();
      await releaseAll(granted);
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);

      // An aborted upload that held its upload slot gives it on to the next upload.
      const blocker = now(l.acquire('general'));
      const controller = new AbortController();
      const upload = Promise.resolve(l.acquire('upload', { signal: controller.signal }));
      const upload2 = Promise.resolve(l.acquire('upload'));
      controller.abort();
      await expect(upload).rejects.toBeInstanceOf(OAAbortError);
      blocker.release();
      (await upload2).release();
      // An already aborted signal is refused at once, even with free slots.
      await expect(
        Promise.resolve(l.acquire('general', { signal: AbortSignal.abort() })),
      ).rejects.toBeInstanceOf(OAAbortError);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('stop() rejects every queued request as not sent, clears its timers, and refuses later ones', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
    const before = timers();
    const l = limiter([1, 60_000], [1, 60_000]);
    // Constructing starts nothing; a slot on its way back with nobody waiting keeps nothing alive.
    expect(timers()).toBe(before);
    now(l.acquire('general')).ended();
    expect(timers()).toBe(before);
    const signal = new AbortController().signal;
    const queued = [
      l.acquire('general', { signal }),
      l.acquire('upload'),
      l.acquire('general', { first: true }),
    ];
    // Something waits behind the refill timer now: it keeps the process alive.
    expect(timers()).toBe(before + 1);
    l.stop();
    const errors = await Promise.all(queued.map((p) => Promise.resolve(p).catch((e: unknown) => e)));
    for (const error of errors) {
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as Error).message).toBe('Not sent: the client was closed while the request was queued');
    }
    expect(timers()).toBe(before);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    await expect(Promise.resolve(l.acquire('general'))).rejects.toBeInstanceOf(OAConnectionError);
  });

  it('never lets a span of a window hold more than max requests, whatever the mix of ends and releases', async () => {
    const request = fc.record({
      bucket: fc.constantFrom<Bucket>('general', 'general', 'upload'),
      delayMs: fc.integer({ min: 0, max: 15 }),
      holdMs: fc.integer({ min: 0, max: 6 }),
      send: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 15, max: 30 }),
        fc.integer({ min: 1, max: 2 }),
        fc.array(request, { minLength: 1, maxLength: 12 }),
        async (max, windowMs, uploadMax, requests) => {
          const l = limiter([max, windowMs], [uploadMax, windowMs]);
          const sent: Sent[] = [];
          await Promise.all(
            requests.map(async ({ bucket, delayMs, holdMs, send }) => {
              await new Promise((resolve) => setTimeout(resolve, delayMs));
              await use(l, bucket, holdMs, send, sent);
            }),
          );
          l.stop();
          expect(worstSpan(sent, windowMs)).toBeLessThanOrEqual(max);
          const uploads = sent.filter((s) => s.bucket === 'upload');
          expect(worstSpan(uploads, windowMs)).toBeLessThanOrEqual(uploadMax);
        },
      ),
      { numRuns: 10 },
    );
  });
});
