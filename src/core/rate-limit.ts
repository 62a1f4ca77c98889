import Bottleneck from 'bottleneck';
import { OAAbortError, OAConfigError, OAConnectionError } from '../errors.js';
import { abortError, raceAbort } from './wait.js';

const QUEUE_WAIT = 'waiting for the rate limit';

/** At most `max` requests in any span of `windowMs`. */
export interface RateLimitWindow {
  max: number;
  windowMs: number;
}

/** The client's own limits, kept below the API's so that it never sees a 429 of ours. */
export interface RateLimitOptions {
  /** Every request, auth and uploads included. @default { max: 200, windowMs: 60_000 } */
  general?: RateLimitWindow;
  /** Requests to paths under `/upload` (they count in `general` too). @default { max: 20, windowMs: 60_000 } */
  upload?: RateLimitWindow;
}

export type RateLimitBucket = 'general' | 'upload';

/** The spec's limits: 200 requests a minute, and 20 a minute for uploads. */
export const SPEC_RATE_LIMITS: Required<RateLimitOptions> = {
  general: { max: 200, windowMs: 60_000 },
  upload: { max: 20, windowMs: 60_000 },
};

/**
 * A server counts a request somewhere between its first byte and its answer. A slot comes back one
 * window after the answer (or the failure) of the request that used it, plus 1% (at most 250 ms) for
 * timer and clock granularity, so no span of `windowMs` can hold `max + 1` requests as the server
 * counts them, wherever it counts them and whatever the latency. The cost is the latency over the
 * window: a few ms in 60 s for JSON calls.
 */
export function marginMs(windowMs: number): number {
  return Math.min(250, Math.ceil(windowMs * 0.01));
}

function checkWindow(name: string, value: RateLimitWindow | undefined, fallback: RateLimitWindow) {
  if (value === undefined) return fallback;
  const { max, windowMs } = value;
  if (!Number.isInteger(max) || max < 1 || !Number.isFinite(windowMs) || windowMs <= 0) {
    throw new OAConfigError(
      `rateLimit.${name} must be { max: a positive integer, windowMs: a positive number }`,
    );
  }
  return { max, windowMs };
}

/** Fills in the spec's limits; `false` turns the limiter off. */
export function resolveRateLimit(
  option: RateLimitOptions | false | undefined,
): Required<RateLimitOptions> | false {
  if (option === false) return false;
  if (option !== undefined && (typeof option !== 'object' || option === null)) {
    throw new OAConfigError('rateLimit must be an object or false');
  }
  return {
    general: checkWindow('general', option?.general, SPEC_RATE_LIMITS.general),
    upload: checkWindow('upload', option?.upload, SPEC_RATE_LIMITS.upload),
  };
}

/**
 * One limit, kept for every span of `windowMs` whatever the server's window (sliding, or fixed and
 * aligned anywhere): the reservoir starts full, each request takes one slot, and the slot comes back
 * one window (plus a margin) after the request ended. A burst up to `max` goes at once.
 */
class Window {
  readonly #limiter: Bottleneck;
  readonly #refillAfterMs: number;
  readonly #refills = new Set<NodeJS.Timeout>();
  /** Takes scheduled and not yet granted. */
  #waiting = 0;
  /** Slots in the reservoir, mirrored so that a take can tell whether it will queue. */
  #free: number;
  /** Takes that get the next slot to come back, before anything queued in bottleneck. */
  readonly #first: ((error?: Error) => void)[] = [];

  constructor({ max, windowMs }: RateLimitWindow) {
    this.#free = max;
    this.#limiter = new Bottleneck({ reservoir: max });
    this.#limiter.on('error', () => {});
    this.#refillAfterMs = windowMs + marginMs(windowMs);
  }

  /**
   * Resolves once a slot is taken, to `true` when it had to queue for it; `priority` 0 (auth) goes
   * before 5 (everything else).
   */
  async take(signal: AbortSignal | undefined, priority: number): Promise<boolean> {
    if (signal?.aborted) throw abortError(signal, QUEUE_WAIT);
    let abandoned = false;
    const queued = this.#free - this.#waiting <= 0;
    this.#setWaiting(+1);
    const taken = this.#limiter.schedule({ priority }, async () => {
      this.#free--;
      // A caller that gave up while queued leaves its slot for the next one.
      if (abandoned) this.giveBack();
    });
    try {
      await raceAbort(taken, signal, QUEUE_WAIT);
    } catch (error) {
      abandoned = true;
      throw error instanceof OAAbortError
        ? error
        : new OAConnectionError('Not sent: the client was closed while the request was queued', {
            cause: error,
            failure: 'final',
          });
    } finally {
      this.#setWaiting(-1);
    }
    return queued;
  }

  /**
   * Like {@link take}, but ahead of every take queued in bottleneck: the next slot that comes back is
   * handed over directly (bottleneck's own queueing is asynchronous, so a priority alone can lose the
   * race to takes already queued).
   */
  async takeFirst(signal: AbortSignal | undefined): Promise<boolean> {
    if (this.#free - this.#waiting > 0) return this.take(signal, 0);
    if (signal?.aborted) throw abortError(signal, QUEUE_WAIT);
    this.#setWaiting(+1);
    let handOver: ((error?: Error) => void) | undefined;
    const granted = new Promise<void>((resolve, reject) => {
      handOver = (error) => (error ? reject(error) : resolve());
    });
    const entry = handOver as (error?: Error) => void;
    this.#first.push(entry);
    try {
      await raceAbort(granted, signal, QUEUE_WAIT);
    } catch (error) {
      const at = this.#first.indexOf(entry);
      // Still waiting: leave the line. Already handed a slot: give it on.
      if (at >= 0) this.#first.splice(at, 1);
      else if (error instanceof OAAbortError) this.giveBack();
      throw error;
    } finally {
      this.#setWaiting(-1);
    }
    return true;
  }

  /** The request that took the slot has ended: the slot comes back one window later. */
  ended(): void {
    const timer = setTimeout(() => {
      this.#refills.delete(timer);
      this.giveBack();
    }, this.#refillAfterMs);
    // Refill timers keep the process alive only while a request is queued behind them.
    if (this.#waiting === 0) timer.unref();
    this.#refills.add(timer);
  }

  /** A slot comes back: to the first take waiting ahead of the queue, else to the reservoir. */
  giveBack(): void {
    const next = this.#first.shift();
    if (next) {
      next();
      return;
    }
    this.#free++;
    this.#limiter.incrementReservoir(1).catch(() => {});
  }

  #setWaiting(delta: number) {
    const before = this.#waiting;
    this.#waiting += delta;
    if ((before === 0) === (this.#waiting === 0)) return;
    for (const timer of this.#refills) {
      if (this.#waiting > 0) timer.ref();
      else timer.unref();
    }
  }

  stop(): void {
    const closed = new OAConnectionError('Not sent: the client was closed while the request was queued', {
      failure: 'final',
    });
    for (const handOver of this.#first.splice(0)) handOver(closed);
    for (const timer of this.#refills) clearTimeout(timer);
    this.#refills.clear();
    this.#limiter.stop({ dropWaitingJobs: true }).catch(() => {});
  }
}

/** A slot in every window a request counts in. */
export interface Permit {
  /** How long the request waited in the queue, in ms; 0 when it did not queue. */
  waitedMs: number;
  /** The request was sent and has ended (answered or failed): its slots come back one window later. */
  ended(): void;
  /** The request will not be sent after all: its slots come back now. */
  release(): void;
}

/** What the client needs of a rate limiter: one slot per request in every window it counts in. */
export interface AcquireOptions {
  /** Rejects a queued request with OAAbortError when it fires; the request leaves the queue. */
  signal?: AbortSignal | undefined;
  /** Ahead of every queued request: token calls, a 401 replay, a call that gave its slot back to wait for a token. */
  first?: boolean | undefined;
}

export interface Limiter {
  /** A permit at once when every window it counts in has a free slot and nothing is queued ahead; else a promise of one. */
  acquire(bucket: RateLimitBucket, options?: AcquireOptions): Permit | Promise<Permit>;
  /** Drops queued requests (they reject) and clears every timer. */
  stop(): void;
}

/** The client's two limits (API.md `rateLimit`). */
export class RateLimiter implements Limiter {
  readonly #general: Window;
  readonly #upload: Window;

  constructor(limits: Required<RateLimitOptions>) {
    this.#general = new Window(limits.general);
    this.#upload = new Window(limits.upload);
  }

  /**
   * Waits until the request may go in every window it counts in (uploads in both). Rejects with
   * `OAAbortError` when `signal` fires while queued. `priority`: 0 for auth, 5 for everything else.
   */
  async acquire(bucket: RateLimitBucket, { signal, first }: AcquireOptions = {}): Promise<Permit> {
    const priority = first ? 0 : 5;
    const started = performance.now();
    const windows = bucket === 'upload' ? [this.#upload, this.#general] : [this.#general];
    const taken: Window[] = [];
    let queued = false;
    try {
      for (const window of windows) {
        // An upload that holds its upload slot goes ahead of every other request for its general
        // slot, so that the upload slot is not held idle while a queue of sends drains.
        const first = window === this.#general && taken.length > 0;
        if (await (first ? window.takeFirst(signal) : window.take(signal, priority))) queued = true;
        taken.push(window);
      }
    } catch (error) {
      for (const window of taken) window.giveBack();
      throw error;
    }
    let settled = false;
    return {
      waitedMs: queued ? performance.now() - started : 0,
      ended() {
        if (settled) return;
        settled = true;
        for (const window of taken) window.ended();
      },
      release() {
        if (settled) return;
        settled = true;
        for (const window of taken) window.giveBack();
      },
    };
  }

  /** Drops queued requests (they reject) and clears every timer. */
  stop(): void {
    this.#general.stop();
    this.#upload.stop();
  }
}
