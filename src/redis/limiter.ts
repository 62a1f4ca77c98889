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
import { bulkPaceMs, marginMs, reservedSlots, tierOf } from '../core/rate-limit.js';
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
  /** A bulk request's reserve (`AcquireOptions.reserve`); 0 for the others. */
  reserve: number;
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
  /** The general window's bulk set (see `ACQUIRE`), where a bulk request's slot is counted too. */
  bulkKey: string;
  /** `keys` and `holds` of a bulk request: its windows, then the bulk set. */
  bulkKeys: string[];
  bulkHolds: number[];
  /** The general window's max and hold (its last window): what a bulk request's reserve and pace are of. */
  generalMax: number;
  generalHoldMs: number;
  queue: Waiter[];
  pumping: boolean;
  nap: { wake(): void } | undefined;
  /** The nap is a bulk request's (its reserve or pace): an ordinary request queued now wakes it. */
  napForBulk: boolean;
  /** Members of this lane's requests in flight, whose leases this process renews. */
  inFlight: Set<string>;
  /** Of them, bulk requests' (renewed in the bulk set too). */
  inFlightBulk: Set<string>;
}

function lane(windows: [string, RateLimitWindow][], bulkKey: string): Lane {
  const general = (windows.at(-1) as [string, RateLimitWindow])[1];
  const keys = windows.map(([key]) => key);
  const holds = windows.map(([, { windowMs }]) => holdMs(windowMs));
  return {
    keys,
    limits: windows.flatMap(([, { max, windowMs }]) => [max, holdMs(windowMs)]),
    holds,
    bulkKey,
    bulkKeys: [...keys, bulkKey],
    bulkHolds: [...holds, holdMs(general.windowMs)],
    generalMax: general.max,
    generalHoldMs: holdMs(general.windowMs),
    queue: [],
    pumping: false,
    nap: undefined,
    napForBulk: false,
    inFlight: new Set(),
    inFlightBulk: new Set(),
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
  /** When the api key's next bulk grant is due, for bulk requests with a reserve (see `ACQUIRE`). */
  readonly #pace: string;
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
    this.#pace = `${base}bulk-pace`;
    const bulk = `${base}general-bulk`;
    this.#general = lane([[`${base}general`, limits.general]], bulk);
    this.#upload = lane(
      [
        [`${base}upload`, limits.upload],
        [`${base}general`, limits.general],
      ],
      bulk,
    );
  }

  /**
   * Waits until the request may go in every window it counts in (uploads in both): always a promise,
   * since the slots are counted in Redis. Rejects with `OAAbortError` when `signal` fires while
   * queued. `first` requests go ahead of the rest queued in this process, `bulk` ones behind; and
   * `bulk` ones wait while another process has an ordinary request waiting for a slot. Bulk requests
   * with a `reserve` leave that share of the general window free and keep to its pace, counted in
   * Redis for every process of the api key.
   */
  acquire(bucket: RateLimitBucket, options?: AcquireOptions): Promise<Permit> {
    const signal = options?.signal;
    const tier = tierOf(options);
    const priority = PRIORITY[tier];
    const reserve = tier === 'bulk' ? (options?.reserve ?? 0) : 0;
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
        reserve,
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
      // The loop sleeps for a bulk request held back by its reserve or pace, not for a full window: an
      // ordinary request may have a slot now.
      if (priority < PRIORITY.bulk && lane.napForBulk) lane.nap?.wake();
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
      let batch = lane.queue.slice(0, MAX_BATCH);
      // The queue is in priority order: the ordinary requests come before the bulk ones.
      const bulkAt = batch.findIndex((waiter) => waiter.priority === PRIORITY.bulk);
      // One reserve a script call: the bulk requests after the first one with another wait for the next.
      const reserve = batch[bulkAt]?.reserve ?? 0;
      if (bulkAt !== -1) {
        const other = batch.findIndex((waiter, i) => i > bulkAt && waiter.reserve !== reserve);
        if (other !== -1) batch = batch.slice(0, other);
      }
      const members = batch.map(() => `${this.#id}:${++this.#members}`);
      const { generalMax, generalHoldMs } = lane;
      let granted: number;
      let waitMs: number;
      try {
        const answer = await this.#connection.run(
          ACQUIRE,
          [...lane.keys, this.#waiting, this.#pace, lane.bulkKey],
          [
            this.#options.inFlightLeaseMs,
            ...lane.limits,
            this.#id,
            CLAIM_MS,
            bulkAt === -1 ? batch.length : bulkAt,
            reserve > 0 ? reservedSlots(generalMax, reserve) : 0,
            reserve > 0 ? bulkPaceMs(generalHoldMs, generalMax, reserve) : 0,
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
        const bulk = waiter.priority === PRIORITY.bulk;
        if (settle(lane, waiter)) waiter.resolve(this.#permit(lane, member, waiter, bulk));
        // Its caller gave up (or the limiter stopped) while Redis answered: the slot goes back.
        else this.#run(RELEASE, bulk ? lane.bulkKeys : lane.keys, [member]);
      }
      if (granted < batch.length && !this.#stopped) {
        for (const waiter of lane.queue) waiter.queued = true;
        const nap = sleep(Math.min(waitMs, MAX_NAP_MS), undefined, QUEUE_WAIT);
        lane.nap = nap;
        // Every ordinary request of the batch had its slot: the one left waiting is a bulk request.
        lane.napForBulk = bulkAt !== -1 && granted >= bulkAt;
        await nap.done;
        lane.nap = undefined;
        lane.napForBulk = false;
      }
    }
  }

  /** `bulk`: a bulk request's slot, counted in the bulk set too. */
  #permit(lane: Lane, member: string, waiter: Waiter, bulk: boolean): Permit {
    const inFlight = bulk ? lane.inFlightBulk : lane.inFlight;
    const keys = bulk ? lane.bulkKeys : lane.keys;
    inFlight.add(member);
    this.#leaseTimer ??= this.#startLeases();
    let settled = false;
    const done = () => {
      if (settled) return false;
      settled = true;
      inFlight.delete(member);
      const lanes = [this.#general, this.#upload];
      if (lanes.every((l) => l.inFlight.size === 0 && l.inFlightBulk.size === 0)) this.#stopLeases();
      return true;
    };
    return {
      waitedMs: waiter.queued ? performance.now() - waiter.started : 0,
      ended: () => {
        if (done()) this.#run(ENDED, keys, [member, ...(bulk ? lane.bulkHolds : lane.holds)]);
      },
      release: () => {
        if (!done()) return;
        this.#run(RELEASE, keys, [member], () => {
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
        if (lane.inFlight.size > 0) {
          this.#run(RENEW_LEASES, lane.keys, [inFlightLeaseMs, ...lane.holds, ...lane.inFlight]);
        }
        if (lane.inFlightBulk.size > 0) {
          this.#run(RENEW_LEASES, lane.bulkKeys, [inFlightLeaseMs, ...lane.bulkHolds, ...lane.inFlightBulk]);
        }
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
