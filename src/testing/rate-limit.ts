/** Request-rate windows of the fake, evaluated lazily from the clock: no timers. */
import type { RateWindowOptions } from './types.js';

/** One limit: whether a request may pass now, and how long until one may. */
export interface RateWindow {
  /** `undefined` when a request may pass now, else ms until one may. */
  blockedForMs(now: number): number | undefined;
  /** Counts an accepted request. */
  record(now: number): void;
  clear(): void;
}

/** At most `max` accepted requests in any span of `windowMs` (a sliding log). */
export function slidingWindow({ max, windowMs }: RateWindowOptions): RateWindow {
  let accepted: number[] = [];
  const prune = (now: number) => {
    const from = accepted.findIndex((t) => t > now - windowMs);
    accepted = from === -1 ? [] : accepted.slice(from);
  };
  return {
    blockedForMs(now) {
      prune(now);
      if (accepted.length < max) return undefined;
      // The request that frees a slot is the max-th newest one.
      const oldest = accepted[accepted.length - max] ?? now;
      return Math.max(1, oldest + windowMs - now);
    },
    record(now) {
      // Requests are stamped when they arrive but recorded once their body is read, so a slow upload
      // may be recorded after a later request: keep the log in time order.
      let at = accepted.length;
      while (at > 0 && (accepted[at - 1] ?? 0) > now) at--;
      accepted.splice(at, 0, now);
    },
    clear() {
      accepted = [];
    },
  };
}

/** NestJS-throttler-style: a window starts at the first request after the previous window ended. */
export function fixedWindow({ max, windowMs }: RateWindowOptions): RateWindow {
  let start = Number.NEGATIVE_INFINITY;
  let count = 0;
  const roll = (now: number) => {
    if (now >= start + windowMs) {
      start = now;
      count = 0;
    }
  };
  return {
    blockedForMs(now) {
      roll(now);
      return count < max ? undefined : Math.max(1, start + windowMs - now);
    },
    record(now) {
      roll(now);
      count++;
    },
    clear() {
      start = Number.NEGATIVE_INFINITY;
      count = 0;
    },
  };
}
