/**
 * One abort listener per signal, however many queued requests share it: a caller may hand the same
 * `AbortSignal` to thousands of calls, and a listener each would pile up (Node warns past 10).
 */
export class SignalWatch<T> {
  readonly #watches = new Map<AbortSignal, { waiters: Set<T>; onAbort: () => void }>();
  readonly #aborted: (signal: AbortSignal, waiters: T[]) => void;

  /** `aborted` receives every waiter still watched when its signal fires; they are no longer watched. */
  constructor(aborted: (signal: AbortSignal, waiters: T[]) => void) {
    this.#aborted = aborted;
  }

  /** Watches `signal` for `waiter`: the first waiter of a signal adds its one listener. */
  add(signal: AbortSignal, waiter: T): void {
    let watch = this.#watches.get(signal);
    if (watch === undefined) {
      const waiters = new Set<T>();
      const onAbort = () => {
        this.#watches.delete(signal);
        this.#aborted(signal, [...waiters]);
      };
      watch = { waiters, onAbort };
      this.#watches.set(signal, watch);
      signal.addEventListener('abort', onAbort, { once: true });
    }
    watch.waiters.add(waiter);
  }

  /** `waiter` was granted or left: the listener goes with the last waiter of its signal. */
  delete(signal: AbortSignal, waiter: T): void {
    const watch = this.#watches.get(signal);
    if (watch === undefined || !watch.waiters.delete(waiter) || watch.waiters.size > 0) return;
    signal.removeEventListener('abort', watch.onAbort);
    this.#watches.delete(signal);
  }
}
