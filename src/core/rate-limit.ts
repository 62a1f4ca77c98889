import { OAConfigError, OAConnectionError } from '../errors.js';
import { type Queued, Window } from './limit-window.js';
import { SignalWatch } from './signal-watch.js';
import { abortError } from './wait.js';

const QUEUE_WAIT = 'waiting for the rate limit';

/** At most `max` requests in any span of `windowMs`. */
export interface RateLimitWindow {
  /** At most this many requests... */
  max: number;
  /** ...in any span of this many ms. */
  windowMs: number;
}

/** The client's own limits, kept below the API's so that it never sees a 429 of ours. */
export interface RateLimitOptions {
  /** Every request, auth and uploads included. @default { max: 200, windowMs: 60_000 } */
  general?: RateLimitWindow | undefined;
  /** Requests to paths under `/upload` (they count in `general` too). @default { max: 20, windowMs: 60_000 } */
  upload?: RateLimitWindow | undefined;
}

/** Both limits, defaults filled in: what a client counts, and what it asks a coordination to count. */
export interface RateLimits {
  /** Every request, auth and uploads included. */
  general: RateLimitWindow;
  /** Requests to paths under `/upload` (they count in `general` too). */
  upload: RateLimitWindow;
}

/** The two limits of the API: every request, and uploads. */
export type RateLimitBucket = 'general' | 'upload';

/** The spec's limits: 200 requests a minute, and 20 a minute for uploads. */
export const SPEC_RATE_LIMITS: RateLimits = {
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
export function resolveRateLimit(option: RateLimitOptions | false | undefined): RateLimits | false {
  if (option === false) return false;
  if (option !== undefined && (typeof option !== 'object' || option === null)) {
    throw new OAConfigError('rateLimit must be an object or false');
  }
  return {
    general: checkWindow('general', option?.general, SPEC_RATE_LIMITS.general),
    upload: checkWindow('upload', option?.upload, SPEC_RATE_LIMITS.upload),
  };
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

/** How a request asks for its slot. */
export interface AcquireOptions {
  /** Rejects a queued request with OAAbortError when it fires; the request leaves the queue. */
  signal?: AbortSignal | undefined;
  /** Ahead of every queued request: token calls, a 401 replay, a call that gave its slot back to wait for a token. */
  first?: boolean | undefined;
}

/** What the client needs of a rate limiter: one slot per request in every window it counts in. */
export interface Limiter {
  /** A permit at once when every window it counts in has a free slot and nothing is queued ahead; else a promise of one. */
  acquire(bucket: RateLimitBucket, options?: AcquireOptions): Permit | Promise<Permit>;
  /** Drops queued requests (they reject) and clears every timer. */
  stop(): void;
}

/** A request waiting for its slots. */
interface Waiter extends Queued {
  readonly started: number;
  /** It counts in the upload window too. */
  readonly upload: boolean;
  /** It has its upload slot and waits for its general one. */
  holdsUpload: boolean;
  readonly signal: AbortSignal | undefined;
  resolve(permit: Permit): void;
  reject(error: unknown): void;
}

const closedError = () =>
  new OAConnectionError('Not sent: the client was closed while the request was queued', { failure: 'final' });

/**
 * The client's two limits (API.md `rateLimit`), kept for every span of `windowMs` whatever the
 * server's window (sliding, or fixed and aligned anywhere): each window starts full, each request
 * takes one slot, and the slot comes back one window (plus {@link marginMs}) after the request ended.
 * A burst up to `max` goes at once.
 *
 * A free slot is granted synchronously: `acquire` returns the permit itself, with no timer and no
 * promise in the way, so the limiter costs a call almost nothing while there is room. Only a request
 * that must wait gets a promise. Uploads count in both windows: an upload takes its upload slot first
 * and, holding it, goes ahead of the queue for its general slot, so the upload slot is not held idle
 * while a queue of sends drains.
 */
export class RateLimiter implements Limiter {
  readonly #general: Window<Waiter>;
  readonly #upload: Window<Waiter>;
  /** The queued requests of each signal, so that one signal shared by many calls has one listener. */
  readonly #watches = new SignalWatch<Waiter>((signal, waiters) => this.#aborted(signal, waiters));
  #stopped = false;

  /** Starts nothing: timers exist only while slots are on their way back. */
  constructor(limits: RateLimits) {
    const window = ({ max, windowMs }: RateLimitWindow) =>
      new Window<Waiter>(max, windowMs + marginMs(windowMs), () => this.#drain());
    this.#general = window(limits.general);
    this.#upload = window(limits.upload);
  }

  /**
   * A permit at once when every window the request counts in (uploads: both) has a free slot and
   * nothing is queued ahead; else a promise of one, which rejects with `OAAbortError` when `signal`
   * fires while queued. `first` requests go ahead of every queued one.
   */
  acquire(bucket: RateLimitBucket, options?: AcquireOptions): Permit | Promise<Permit> {
    if (this.#stopped) return Promise.reject(closedError());
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal, QUEUE_WAIT));
    const general = this.#general;
    const first = options?.first === true;
    if (bucket !== 'upload') {
      if (general.free > 0 && !general.queued) {
        general.free--;
        return this.#permit(false, 0);
      }
      return this.#wait(general, false, false, first, signal);
    }
    const upload = this.#upload;
    if (upload.free === 0 || upload.queued) return this.#wait(upload, true, false, first, signal);
    upload.free--;
    if (general.free > 0 && !general.queued) {
      general.free--;
      return this.#permit(true, 0);
    }
    return this.#wait(general, true, true, true, signal);
  }

  #wait(
    window: Window<Waiter>,
    upload: boolean,
    holdsUpload: boolean,
    first: boolean,
    signal: AbortSignal | undefined,
  ): Promise<Permit> {
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = {
        started: performance.now(),
        upload,
        holdsUpload,
        signal,
        done: false,
        resolve,
        reject,
      };
      window.enqueue(waiter, first);
      if (signal) this.#watches.add(signal, waiter);
    });
  }

  /** Hands freed slots to the queues: uploads to their upload slot, then the general window's line. */
  #drain(): void {
    if (this.#stopped) return;
    const general = this.#general;
    const upload = this.#upload;
    while (upload.free > 0) {
      const waiter = upload.next();
      if (waiter === undefined) break;
      upload.free--;
      waiter.holdsUpload = true;
      general.enqueue(waiter, true);
    }
    while (general.free > 0) {
      const waiter = general.next();
      if (waiter === undefined) break;
      general.free--;
      waiter.done = true;
      this.#unwatch(waiter);
      waiter.resolve(this.#permit(waiter.upload, performance.now() - waiter.started));
    }
  }

  #permit(upload: boolean, waitedMs: number): Permit {
    let settled = false;
    return {
      waitedMs,
      ended: () => {
        if (settled) return;
        settled = true;
        if (this.#stopped) return;
        this.#general.ended();
        if (upload) this.#upload.ended();
      },
      release: () => {
        if (settled) return;
        settled = true;
        this.#general.free++;
        if (upload) this.#upload.free++;
        this.#drain();
      },
    };
  }

  /** The waiter was granted or left: it no longer listens to its signal. */
  #unwatch(waiter: Waiter): void {
    if (waiter.signal !== undefined) this.#watches.delete(waiter.signal, waiter);
  }

  #aborted(signal: AbortSignal, waiters: readonly Waiter[]): void {
    for (const waiter of waiters) {
      waiter.done = true;
      if (waiter.upload && !waiter.holdsUpload) this.#upload.left();
      else this.#general.left();
      // It gives its upload slot on to the next upload.
      if (waiter.holdsUpload) this.#upload.free++;
      waiter.reject(abortError(signal, QUEUE_WAIT));
    }
    this.#drain();
  }

  /** Drops queued requests (they reject) and clears every timer. */
  stop(): void {
    this.#stopped = true;
    for (const waiter of [...this.#upload.stop(), ...this.#general.stop()]) {
      waiter.done = true;
      this.#unwatch(waiter);
      waiter.reject(closedError());
    }
  }
}
