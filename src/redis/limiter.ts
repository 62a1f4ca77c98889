/** The two rate limits of an api key, counted in Redis across every process that uses it. */
import { randomUUID } from 'node:crypto';
import { abortError, SignalWatch, sleep } from '../core/call-control.js';
import type { Logger } from '../core/logger.js';
import type {
  AcquireOptions,
  Limiter,
  Permit,
  RateLimitBucket,
  RateLimits,
  RateLimitWindow,
  Tier,
} from '../core/rate-limit.js';
import { marginMs, tierOf } from '../core/rate-limit.js';
import { OAConnectionError } from '../errors.js';
import type { RedisConnection } from './connection.js';
import { hashTag } from './keys.js';
import { ACQUIRE, ENDED, RELEASE, RENEW_LEASES } from './scripts.js';

export interface SharedLimiterOptions {
  prefix: string;
  /** How long a request in flight keeps its slots without news from its process. */
  inFlightLeaseMs: number;
  logger: Logger;
  /** Called once by `stop()`. */
  onStop?: () => void;
}

/**
 * As in the in-process limiter: a slot comes back one window after its request ended, plus a margin
 * for timer and clock granularity (and here the trip to Redis).
 */
function holdMs(windowMs: number): number {
  return Math.ceil(windowMs + marginMs(windowMs));
}

const QUEUE_WAIT = 'waiting for the rate limit';

/** Slots asked for in one script call: a burst of `max` goes in a few round trips. */
const MAX_BATCH = 50;
/**
 * The longest a blocked queue sleeps before asking again, even when Redis said a slot cannot come back
 * sooner: a request another process did not send after all gives its slot back at once.
 */
const MAX_NAP_MS = 1000;

/**
 * How long this process's claim for an ordinary request waiting for a slot (which holds back other
 * processes' bulk requests) lasts without being asked again: its queue asks at least every
 * {@link MAX_NAP_MS}, so a claim lapses only once nothing of this process waits (or it died).
 */
const CLAIM_MS = 2 * MAX_NAP_MS + 500;

/** The local queue's priority of each tier (lower first): `first` requests, ordinary ones, a campaign's. */
const PRIORITY: Record<Tier, number> = { first: 0, rest: 5, bulk: 9 };

interface Waiter {
  lane: Lane;
  priority: number;
  seq: number;
  started: number;
  /** It waited behind a full window (for `Permit.waitedMs`). */
  queued: boolean;
  settled: boolean;
  resolve(permit: Permit): void;
  reject(error: unknown): void;
  /** Stops listening to the caller's signal. */
  forget(): void;
}

/** The requests of one bucket in this process, and the windows they count in. */
interface Lane {
  keys: string[];
  /** max and hold of each window, in the order of `keys`. */
  limits: number[];
  holds: number[];
  queue: Waiter[];
  pumping: boolean;
  nap: { wake(): void } | undefined;
  /** Members of this lane's requests in flight, whose leases this process renews. */
  inFlight: Set<string>;
}

function lane(windows: [string, RateLimitWindow][]): Lane {
  return {
    keys: windows.map(([key]) => key),
    limits: windows.flatMap(([, { max, windowMs }]) => [max, holdMs(windowMs)]),
    holds: windows.map(([, { windowMs }]) => holdMs(windowMs)),
    queue: [],
    pumping: false,
    nap: undefined,
    inFlight: new Set(),
  };
}

/**
 * A {@link Limiter} whose windows are sorted sets in Redis, one per limit of the api key: every process
 * takes its slots there, in one script that checks (for an upload) both windows at once. Requests of
 * this process queue locally by priority; one loop per bucket asks Redis for slots for the head of the
 * queue and, when the window is full, sleeps until the earliest moment a slot can come back.
 */
export class RedisLimiter implements Limiter {
  readonly #connection: RedisConnection;
  readonly #options: SharedLimiterOptions;
  readonly #general: Lane;
  readonly #upload: Lane;
  /** The processes with an ordinary request waiting for a slot of this api key (see `ACQUIRE`). */
  readonly #waiting: string;
  readonly #id = randomUUID();
  #members = 0;
  #seq = 0;
  #leaseTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  /** One abort listener per signal, however many queued requests share it. */
  readonly #signals = new SignalWatch<Waiter>((signal, waiters) => {
    for (const waiter of waiters) {
      if (settle(waiter.lane, waiter)) waiter.reject(abortError(signal, QUEUE_WAIT));
    }
  });

  constructor(connection: RedisConnection, key: string, limits: RateLimits, options: SharedLimiterOptions) {
    this.#connection = connection;
    this.#options = options;
    // One hash tag for both windows: a script may touch both, and on a Redis Cluster they must share a slot.
    const base = `${options.prefix}limit:${hashTag(key)}:`;
    this.#waiting = `${base}waiting`;
    this.#general = lane([[`${base}general`, limits.general]]);
    this.#upload = lane([
      [`${base}upload`, limits.upload],
      [`${base}general`, limits.general],
    ]);
  }

  /**
   * Waits until the request may go in every window it counts in (uploads in both): always a promise,
   * since the slots are counted in Redis. Rejects with `OAAbortError` when `signal` fires while
   * queued. `first` requests go ahead of the rest queued in this process, `bulk` ones behind; and
   * `bulk` ones wait while another process has an ordinary request waiting for a slot.
   */
  acquire(bucket: RateLimitBucket, options?: AcquireOptions): Promise<Permit> {
    const signal = options?.signal;
    const priority = PRIORITY[tierOf(options)];
    if (signal?.aborted) return Promise.reject(abortError(signal, QUEUE_WAIT));
    if (this.#stopped) {
      return Promise.reject(
        new OAConnectionError('Not sent: the client or its Redis coordination is closed', {
          failure: 'final',
        }),
      );
    }
    const lane = bucket === 'upload' ? this.#upload : this.#general;
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = {
        lane,
        priority,
        seq: this.#seq++,
        started: performance.now(),
        queued: lane.nap !== undefined,
        settled: false,
        resolve,
        reject,
        forget: () => {
          if (signal) this.#signals.delete(signal, waiter);
        },
      };
      if (signal) this.#signals.add(signal, waiter);
      const at = lane.queue.findIndex((w) => w.priority > priority);
      lane.queue.splice(at === -1 ? lane.queue.length : at, 0, waiter);
      void this.#pump(lane);
    });
  }

  async #pump(lane: Lane): Promise<void> {
    if (lane.pumping) return;
    lane.pumping = true;
    try {
      await this.#serve(lane);
    } catch (error) {
      // Not expected; but a queue must never be left waiting on a loop that died.
      for (const waiter of [...lane.queue]) if (settle(lane, waiter)) waiter.reject(error);
    } finally {
      lane.pumping = false;
    }
    // A request may have queued between the loop's last look and here.
    if (lane.queue.length > 0 && !this.#stopped) void this.#pump(lane);
  }

  /** Grants slots to the head of the queue until it is empty, sleeping while the windows are full. */
  async #serve(lane: Lane): Promise<void> {
    while (!this.#stopped && lane.queue.length > 0) {
      const batch = lane.queue.slice(0, MAX_BATCH);
      const members = batch.map(() => `${this.#id}:${++this.#members}`);
      // The queue is in priority order: the ordinary requests come before the bulk ones.
      const bulkAt = batch.findIndex((waiter) => waiter.priority === PRIORITY.bulk);
      let granted: number;
      let waitMs: number;
      try {
        const answer = await this.#connection.run(
          ACQUIRE,
          [...lane.keys, this.#waiting],
          [
            this.#options.inFlightLeaseMs,
            ...lane.limits,
            this.#id,
            CLAIM_MS,
            bulkAt === -1 ? batch.length : bulkAt,
            ...members,
          ],
        );
        [granted, waitMs] = answer as [number, number];
      } catch (error) {
        for (const waiter of batch) if (settle(lane, waiter)) waiter.reject(error);
        continue;
      }
      for (let i = 0; i < granted; i++) {
        const waiter = batch[i] as Waiter;
        const member = members[i] as string;
        if (settle(lane, waiter)) waiter.resolve(this.#permit(lane, member, waiter));
        // Its caller gave up (or the limiter stopped) while Redis answered: the slot goes back.
        else this.#run(RELEASE, lane.keys, [member]);
      }
      if (granted < batch.length && !this.#stopped) {
        for (const waiter of lane.queue) waiter.queued = true;
        const nap = sleep(Math.min(waitMs, MAX_NAP_MS), undefined, QUEUE_WAIT);
        lane.nap = nap;
        await nap.done;
        lane.nap = undefined;
      }
    }
  }

  #permit(lane: Lane, member: string, waiter: Waiter): Permit {
    lane.inFlight.add(member);
    this.#leaseTimer ??= this.#startLeases();
    let settled = false;
    const done = () => {
      if (settled) return false;
      settled = true;
      lane.inFlight.delete(member);
      if (this.#general.inFlight.size === 0 && this.#upload.inFlight.size === 0) this.#stopLeases();
      return true;
    };
    return {
      waitedMs: waiter.queued ? performance.now() - waiter.started : 0,
      ended: () => {
        if (done()) this.#run(ENDED, lane.keys, [member, ...lane.holds]);
      },
      release: () => {
        if (!done()) return;
        this.#run(RELEASE, lane.keys, [member], () => {
          // A general slot is free now: both queues may use it.
          this.#general.nap?.wake();
          this.#upload.nap?.wake();
        });
      },
    };
  }

  /** A script whose failure only costs time: the slot comes back when its lease runs out. */
  #run(script: typeof ENDED, keys: string[], args: (string | number)[], then?: () => void): void {
    this.#connection.run(script, keys, args).then(then, (error: unknown) => {
      this.#options.logger.warn?.('oa-messaging: a rate-limit update in Redis failed', {
        error: (error as Error).message,
      });
    });
  }

  #startLeases(): NodeJS.Timeout {
    const { inFlightLeaseMs } = this.#options;
    const timer = setInterval(() => {
      for (const lane of [this.#general, this.#upload]) {
        if (lane.inFlight.size === 0) continue;
        this.#run(RENEW_LEASES, lane.keys, [inFlightLeaseMs, ...lane.holds, ...lane.inFlight]);
      }
    }, inFlightLeaseMs / 3);
    // The requests in flight keep the process alive; their leases must not.
    timer.unref();
    return timer;
  }

  #stopLeases(): void {
    clearInterval(this.#leaseTimer);
    this.#leaseTimer = undefined;
  }

  /** Drops queued requests (they reject) and clears every timer. */
  stop(): void {
    if (!this.#stopped) this.#options.onStop?.();
    this.#stopped = true;
    this.#stopLeases();
    for (const lane of [this.#general, this.#upload]) {
      for (const waiter of [...lane.queue]) {
        if (settle(lane, waiter)) {
          waiter.reject(
            new OAConnectionError('Not sent: the client was closed while the request was queued', {
              failure: 'final',
            }),
          );
        }
      }
      lane.nap?.wake();
    }
  }
}

/** Takes `waiter` out of the queue; `false` when it was already settled. */
function settle(lane: Lane, waiter: Waiter): boolean {
  if (waiter.settled) return false;
  waiter.settled = true;
  waiter.forget();
  const at = lane.queue.indexOf(waiter);
  if (at !== -1) lane.queue.splice(at, 1);
  return true;
}
