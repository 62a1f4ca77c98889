/**
 * The client's rate limiter: its windows, the permit a request holds, and the slot a call waiting for
 * a token lends to the renewal.
 */
import { OAConnectionError } from '../errors.js';
import { abortError, SignalWatch } from './call-control.js';

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
const SPEC_RATE_LIMITS: RateLimits = {
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

/** Fills in the spec's limits (the option was checked by `OAClientOptionsSchema`); `false` turns the limiter off. */
export function resolveRateLimit(option: RateLimitOptions | false | undefined): RateLimits | false {
  if (option === false) return false;
  const window = ({ max, windowMs }: RateLimitWindow) => ({ max, windowMs });
  return {
    general: window(option?.general ?? SPEC_RATE_LIMITS.general),
    upload: window(option?.upload ?? SPEC_RATE_LIMITS.upload),
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
  /**
   * A campaign's send (`RequestOptions.bulk`): behind every other queued request, so that a reply
   * queued after it goes first; a shared limiter also holds it back while another process has such a
   * request waiting for a slot.
   */
  bulk?: boolean | undefined;
  /**
   * With `bulk`: the share of the general window (0 to under 1) that bulk requests leave to the others
   * (`RequestOptions.replyReserve`). A bulk request with a reserve takes a slot only while bulk
   * requests hold fewer than `max - ceil(reserve * max)` slots of the window (`reservedSlots`),
   * and bulk grants go one per `bulkPaceMs`, spread over the window instead of taking it in a
   * burst as it opens: a reply arriving mid-window finds a slot at once. 0: bulk requests only queue
   * behind the rest, and take every free slot.
   * @default 0
   */
  reserve?: number | undefined;
}

/**
 * The slots of a window of `max` that bulk requests with `reserve` leave to the others:
 * `ceil(reserve * max)`, but never all of them (a campaign keeps at least one slot). Bulk requests
 * hold at most the rest; the others may take any free slot, these included.
 */
export function reservedSlots(max: number, reserve: number): number {
  // 1e-9: a share times max that should be whole (0.7 * 10 = 7.000000000000001) is not rounded up.
  return Math.max(0, Math.min(max - 1, Math.ceil(reserve * max - 1e-9)));
}

/**
 * How long after one bulk grant the next may go, with `reserve`: the window (as the limiter holds a
 * slot: `windowMs` plus {@link marginMs}) over the slots bulk requests may use. A campaign so goes at an
 * even pace, its share of the quota spread over the window, and the slots it takes come back spread too.
 */
export function bulkPaceMs(holdMs: number, max: number, reserve: number): number {
  return holdMs / (max - reservedSlots(max, reserve));
}

/** Where a queued request stands in line: `first` ahead of the rest, `bulk` behind it. */
export type Tier = 'first' | 'rest' | 'bulk';

/** The tier of a request, from its acquire options: every limiter decides it here. */
export const tierOf = (options: AcquireOptions | undefined): Tier =>
  options?.first === true ? 'first' : options?.bulk === true ? 'bulk' : 'rest';

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
  /** Its tier in the window it queues in now (an upload holding its upload slot: `first`). */
  tier: Tier;
  /** A bulk request's reserve (`AcquireOptions.reserve`); 0 for the others. */
  readonly reserve: number;
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
  /** The queued requests of each signal, so that one signal shared by many callers has one listener. */
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
   * fires while queued. `first` requests go ahead of every queued one, `bulk` ones behind.
   */
  acquire(bucket: RateLimitBucket, options?: AcquireOptions): Permit | Promise<Permit> {
    if (this.#stopped) return Promise.reject(closedError());
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal, QUEUE_WAIT));
    const general = this.#general;
    const tier = tierOf(options);
    // The reserve binds bulk requests in the general window only: the account's quota.
    const reserve = tier === 'bulk' ? (options?.reserve ?? 0) : 0;
    if (bucket !== 'upload') {
      // A slot at once: an ordinary request needs only no ordinary one queued ahead of it (bulk requests
      // held back by their reserve or pace may be queued while slots are free); a bulk one, an empty
      // queue and, with a reserve, room above it and its turn in the pace.
      if (
        general.free > 0 &&
        (tier !== 'bulk' ? general.urgent === 0 : !general.queued && general.bulkWaitMs(reserve) === 0)
      ) {
        if (tier === 'bulk') general.tookBulk(reserve);
        general.free--;
        return this.#permit(false, 0, tier === 'bulk');
      }
      return this.#wait(general, false, false, tier, reserve, signal);
    }
    const upload = this.#upload;
    if (upload.free === 0 || upload.queued) return this.#wait(upload, true, false, tier, reserve, signal);
    upload.free--;
    if (general.free > 0 && general.urgent === 0) {
      general.free--;
      return this.#permit(true, 0, false);
    }
    return this.#wait(general, true, true, 'first', reserve, signal);
  }

  #wait(
    window: Window<Waiter>,
    upload: boolean,
    holdsUpload: boolean,
    tier: Tier,
    reserve: number,
    signal: AbortSignal | undefined,
  ): Promise<Permit> {
    return new Promise<Permit>((resolve, reject) => {
      const waiter: Waiter = {
        started: performance.now(),
        tier,
        reserve,
        upload,
        holdsUpload,
        signal,
        done: false,
        resolve,
        reject,
      };
      window.enqueue(waiter, tier);
      if (signal) this.#watches.add(signal, waiter);
      // A bulk request held back by its reserve or pace while slots are free: the drain arms its wake-up.
      if (window.free > 0) this.#drain();
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
      waiter.tier = 'first';
      general.enqueue(waiter, 'first');
    }
    while (general.free > 0) {
      let waiter = general.nextUrgent();
      const bulk = waiter === undefined;
      if (waiter === undefined) {
        const head = general.bulkHead();
        if (head === undefined) break;
        const waitMs = general.bulkWaitMs(head.reserve);
        // Held back: by its pace (a timer wakes it), or by the reserve (a bulk slot coming back does).
        if (waitMs > 0) {
          if (waitMs !== Number.POSITIVE_INFINITY) general.wakeIn(waitMs);
          break;
        }
        general.tookBulk(head.reserve);
        waiter = general.nextBulk() as Waiter;
      }
      general.free--;
      waiter.done = true;
      this.#unwatch(waiter);
      waiter.resolve(this.#permit(waiter.upload, performance.now() - waiter.started, bulk));
    }
  }

  /** `bulk`: the general slot is a bulk request's (counted apart, for the reserve). */
  #permit(upload: boolean, waitedMs: number, bulk: boolean): Permit {
    let settled = false;
    return {
      waitedMs,
      ended: () => {
        if (settled) return;
        settled = true;
        if (this.#stopped) return;
        this.#general.ended(bulk);
        if (upload) this.#upload.ended(false);
      },
      release: () => {
        if (settled) return;
        settled = true;
        this.#general.released(bulk);
        if (upload) this.#upload.released(false);
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
      if (waiter.upload && !waiter.holdsUpload) this.#upload.left(waiter.tier);
      else this.#general.left(waiter.tier);
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

/**
 * A rate-limit slot that a call waiting for a token may lend to the renewal it starts. The renewal's
 * login or refresh needs a slot too; if it had to queue for one while the calls waiting for it held
 * every slot, nothing would move. With the loan it goes at once, the calls that only wait keep their
 * slots (and send the moment the token is there), and only the lender queues again, ahead of the rest.
 */
export class SlotLoan {
  #permit: Permit | undefined;

  constructor(permit: Permit) {
    this.#permit = permit;
  }

  /** The renewal takes the slot, once; `undefined` when it was taken or reclaimed already. */
  lend(): Permit | undefined {
    const permit = this.#permit;
    this.#permit = undefined;
    return permit;
  }

  /** The lender takes its slot back: `true` when it was not lent, so it is still the lender's. */
  reclaim(): boolean {
    const held = this.#permit !== undefined;
    this.#permit = undefined;
    return held;
  }
}

/** What a window (or a pool share, `pool-share.ts`) queues: a request not granted its place yet, or gone. */
export interface Queued {
  /** Granted, aborted or rejected: a queue skips it. */
  done: boolean;
}

/**
 * A first-in first-out queue with O(1) push and shift. A request that leaves the queue (aborted) is
 * only marked `done` and skipped when it reaches the head, so leaving costs nothing either.
 */
export class Fifo<T extends Queued> {
  #items: (T | undefined)[] = [];
  #head = 0;

  push(item: T): void {
    this.#items.push(item);
  }

  /** The oldest item not yet done, left in the queue (items done ahead of it are dropped). */
  peek(): T | undefined {
    const items = this.#items;
    while (this.#head < items.length) {
      const item = items[this.#head];
      if (item !== undefined && !item.done) return item;
      items[this.#head++] = undefined;
    }
    return undefined;
  }

  /** The oldest item not yet done, taken out of the queue. */
  shift(): T | undefined {
    const items = this.#items;
    while (this.#head < items.length) {
      const item = items[this.#head];
      items[this.#head++] = undefined;
      if (item !== undefined && !item.done) {
        // Drop the consumed head now and then, so a long-lived queue does not grow without bound.
        if (this.#head >= 1024 && this.#head * 2 >= items.length) {
          this.#items = items.slice(this.#head);
          this.#head = 0;
        }
        return item;
      }
    }
    this.#items = [];
    this.#head = 0;
    return undefined;
  }
}

/** A group of slots that come back together: those of requests that ended within the same ms. */
interface Refill {
  /** When the slots may come back, on `performance.now()`'s clock. */
  due: number;
  count: number;
  /** Of them, bulk requests' slots. */
  bulk: number;
  timer: NodeJS.Timeout;
}

/**
 * At most `max` requests in any span of the window: `free` slots are taken synchronously by the
 * limiter; a slot whose request ended comes back `refillAfterMs` later (never earlier), and then
 * `onFree` lets the limiter hand it to the head of the queue.
 *
 * The queue has three tiers: `first` (token calls, 401 replays, uploads that hold their upload slot)
 * goes ahead of the rest, and `bulk` (a campaign's sends) behind it, first-in first-out within each.
 * Bulk requests with a reserve also keep to the window's pace (`bulkPaceMs`) and leave the
 * reserved slots free (`reservedSlots`); the limiter asks `bulkWaitMs` before it grants one.
 */
class Window<T extends Queued> {
  /** Slots that a request may take now. */
  free: number;
  readonly #max: number;
  readonly #refillAfterMs: number;
  readonly #onFree: () => void;
  readonly #tiers: Record<Tier, Fifo<T>> = { first: new Fifo<T>(), rest: new Fifo<T>(), bulk: new Fifo<T>() };
  /** Queued requests not yet done. */
  #queued = 0;
  /** Of them, `first` and `rest` ones. */
  #urgent = 0;
  readonly #refills = new Set<Refill>();
  /** The last refill created: a slot whose request ends in the same ms joins it. */
  #latest: Refill | undefined;
  /**
   * The pace of bulk grants (with a reserve): the time the next one is due, on `performance.now()`'s
   * clock. A grant may go up to one pace before it, so that a wake-up a little late costs no rate.
   */
  #bulkDue = 0;
  /** Wakes a bulk request held back by its pace. */
  #paceTimer: NodeJS.Timeout | undefined;
  /** The slots bulk requests hold (in flight, or not back yet): a reserve caps them. */
  #bulkHeld = 0;

  constructor(max: number, refillAfterMs: number, onFree: () => void) {
    this.free = max;
    this.#max = max;
    this.#refillAfterMs = refillAfterMs;
    this.#onFree = onFree;
  }

  /** Whether a request is waiting for a slot of this window. */
  get queued(): boolean {
    return this.#queued > 0;
  }

  /** How many `first` and `rest` requests wait for a slot of this window. */
  get urgent(): number {
    return this.#urgent;
  }

  /** Queues a request at the end of its tier. */
  enqueue(item: T, tier: Tier): void {
    this.#tiers[tier].push(item);
    if (tier !== 'bulk') this.#urgent++;
    if (this.#queued++ === 0) this.#keepAlive(true);
  }

  /** The next request in line (first tier, then the rest, then bulk), taken out of the queue. */
  next(): T | undefined {
    return this.nextUrgent() ?? this.nextBulk();
  }

  /** The next `first` or `rest` request, taken out of the queue. */
  nextUrgent(): T | undefined {
    const tiers = this.#tiers;
    const item = tiers.first.shift() ?? tiers.rest.shift();
    if (item !== undefined) {
      this.#urgent--;
      if (--this.#queued === 0) this.#keepAlive(false);
    }
    return item;
  }

  /** The first bulk request in line, left in the queue. */
  bulkHead(): T | undefined {
    return this.#tiers.bulk.peek();
  }

  /** The first bulk request in line, taken out of the queue. */
  nextBulk(): T | undefined {
    const item = this.#tiers.bulk.shift();
    if (item !== undefined && --this.#queued === 0) this.#keepAlive(false);
    return item;
  }

  /** A queued request of `tier` was marked done (aborted): it no longer counts as waiting. */
  left(tier: Tier): void {
    if (tier !== 'bulk') this.#urgent--;
    if (--this.#queued === 0) this.#keepAlive(false);
  }

  /**
   * How long a bulk request with `reserve` must wait before it may take a slot: 0 now; `Infinity`
   * while no slot is free, or while bulk requests hold every slot they may (all but the reserved
   * ones: a bulk slot coming back ends that); else the ms until its turn in the pace.
   */
  bulkWaitMs(reserve: number): number {
    if (this.free === 0) return Number.POSITIVE_INFINITY;
    if (reserve <= 0) return 0;
    const max = this.#max;
    if (this.#bulkHeld >= max - reservedSlots(max, reserve)) return Number.POSITIVE_INFINITY;
    const early = this.#bulkDue - bulkPaceMs(this.#refillAfterMs, max, reserve) - performance.now();
    return Math.max(early, 0);
  }

  /** A bulk request took a slot: with a reserve, the next one is due one pace later. */
  tookBulk(reserve: number): void {
    this.#bulkHeld++;
    if (reserve <= 0) return;
    this.#bulkDue =
      Math.max(this.#bulkDue, performance.now()) + bulkPaceMs(this.#refillAfterMs, this.#max, reserve);
  }

  /** A request that took a slot will not be sent: the slot is free now. */
  released(bulk: boolean): void {
    this.free++;
    if (bulk) this.#bulkHeld--;
  }

  /** Asks the limiter to hand out slots again in `ms` (a bulk request's turn in the pace). */
  wakeIn(ms: number): void {
    if (this.#paceTimer !== undefined) return;
    this.#paceTimer = this.#arm(() => {
      this.#paceTimer = undefined;
      this.#onFree();
    }, ms);
  }

  /**
   * The request that took a slot has ended: the slot comes back one window (and the margin) later.
   * Slots whose requests end in the same ms share one timer, rounded up so that none comes back early.
   */
  ended(bulk: boolean): void {
    const now = performance.now();
    const due = Math.ceil(now + this.#refillAfterMs);
    const latest = this.#latest;
    if (latest !== undefined && latest.due === due) {
      latest.count++;
      if (bulk) latest.bulk++;
      return;
    }
    const refill: Refill = {
      due,
      count: 1,
      bulk: bulk ? 1 : 0,
      timer: this.#arm(() => this.#fire(refill), due - now),
    };
    this.#refills.add(refill);
    this.#latest = refill;
  }

  #fire(refill: Refill): void {
    // A timer may fire a little before its time by this clock (the event loop's clock is coarser).
    const early = refill.due - performance.now();
    if (early > 0) {
      refill.timer = this.#arm(() => this.#fire(refill), early);
      return;
    }
    this.#refills.delete(refill);
    if (this.#latest === refill) this.#latest = undefined;
    this.free += refill.count;
    this.#bulkHeld -= refill.bulk;
    this.#onFree();
  }

  #arm(fire: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(fire, Math.ceil(ms));
    // Refill timers keep the process alive only while a request is queued behind them.
    if (this.#queued === 0) timer.unref?.();
    return timer;
  }

  #keepAlive(on: boolean): void {
    const pace = this.#paceTimer;
    if (pace !== undefined) {
      if (on) pace.ref?.();
      else pace.unref?.();
    }
    for (const { timer } of this.#refills) {
      // workerd's timers are numbers, with neither method.
      if (on) timer.ref?.();
      else timer.unref?.();
    }
  }

  /** Clears every timer and empties the queue; returns the requests that were waiting. */
  stop(): T[] {
    for (const { timer } of this.#refills) clearTimeout(timer);
    this.#refills.clear();
    clearTimeout(this.#paceTimer);
    this.#paceTimer = undefined;
    this.#latest = undefined;
    const waiting: T[] = [];
    for (let item = this.next(); item !== undefined; item = this.next()) waiting.push(item);
    return waiting;
  }
}
