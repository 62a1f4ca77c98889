/**
 * One window of the in-process rate limiter: its free slots, the requests queued for one, and the
 * timers that give slots back one window after their requests ended.
 */

/** What a window queues: a request that has not been granted its slot yet, or has left. */
export interface Queued {
  /** Granted, aborted or rejected: a queue skips it. */
  done: boolean;
}

/**
 * A first-in first-out queue with O(1) push and shift. A request that leaves the queue (aborted) is
 * only marked `done` and skipped when it reaches the head, so leaving costs nothing either.
 */
class Fifo<T extends Queued> {
  #items: (T | undefined)[] = [];
  #head = 0;

  push(item: T): void {
    this.#items.push(item);
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
  timer: NodeJS.Timeout;
}

/**
 * At most `max` requests in any span of the window: `free` slots are taken synchronously by the
 * limiter; a slot whose request ended comes back `refillAfterMs` later (never earlier), and then
 * `onFree` lets the limiter hand it to the head of the queue.
 *
 * The queue has two tiers: `first` (token calls, 401 replays, uploads that hold their upload slot)
 * goes ahead of the rest, first-in first-out within each tier.
 */
export class Window<T extends Queued> {
  /** Slots that a request may take now. */
  free: number;
  readonly #refillAfterMs: number;
  readonly #onFree: () => void;
  readonly #first = new Fifo<T>();
  readonly #rest = new Fifo<T>();
  /** Queued requests not yet done. */
  #queued = 0;
  readonly #refills = new Set<Refill>();
  /** The last refill created: a slot whose request ends in the same ms joins it. */
  #latest: Refill | undefined;

  constructor(max: number, refillAfterMs: number, onFree: () => void) {
    this.free = max;
    this.#refillAfterMs = refillAfterMs;
    this.#onFree = onFree;
  }

  /** Whether a request is waiting for a slot of this window. */
  get queued(): boolean {
    return this.#queued > 0;
  }

  /** Queues a request, ahead of the rest when `first`. */
  enqueue(item: T, first: boolean): void {
    (first ? this.#first : this.#rest).push(item);
    if (this.#queued++ === 0) this.#keepAlive(true);
  }

  /** The next request in line (first tier, then the rest), taken out of the queue. */
  next(): T | undefined {
    const item = this.#first.shift() ?? this.#rest.shift();
    if (item !== undefined && --this.#queued === 0) this.#keepAlive(false);
    return item;
  }

  /** A queued request was marked done (aborted): it no longer counts as waiting. */
  left(): void {
    if (--this.#queued === 0) this.#keepAlive(false);
  }

  /**
   * The request that took a slot has ended: the slot comes back one window (and the margin) later.
   * Slots whose requests end in the same ms share one timer, rounded up so that none comes back early.
   */
  ended(): void {
    const now = performance.now();
    const due = Math.ceil(now + this.#refillAfterMs);
    const latest = this.#latest;
    if (latest !== undefined && latest.due === due) {
      latest.count++;
      return;
    }
    const refill: Refill = { due, count: 1, timer: this.#arm(() => this.#fire(refill), due - now) };
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
    this.#onFree();
  }

  #arm(fire: () => void, ms: number): NodeJS.Timeout {
    const timer = setTimeout(fire, Math.ceil(ms));
    // Refill timers keep the process alive only while a request is queued behind them.
    if (this.#queued === 0) timer.unref();
    return timer;
  }

  #keepAlive(on: boolean): void {
    for (const { timer } of this.#refills) {
      if (on) timer.ref();
      else timer.unref();
    }
  }

  /** Clears every timer and empties the queue; returns the requests that were waiting. */
  stop(): T[] {
    for (const { timer } of this.#refills) clearTimeout(timer);
    this.#refills.clear();
    this.#latest = undefined;
    const waiting: T[] = [];
    for (let item = this.next(); item !== undefined; item = this.next()) waiting.push(item);
    return waiting;
  }
}
