/** What becomes of a listener's error: `name` is the event's. */
export type ListenerErrorReport = (name: string, error: unknown) => void;

/**
 * A small typed emitter, keyed by the event names of `Events`. A listener that throws (or rejects) is
 * reported and never breaks what emitted; an event with no listener costs one lookup.
 */
export class TypedEvents<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(event: never) => void>>();
  readonly #report: ListenerErrorReport;

  constructor(report: ListenerErrorReport) {
    this.#report = report;
  }

  on<E extends keyof Events>(name: E, listener: (event: Events[E]) => void): void {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as (event: never) => void);
  }

  off<E extends keyof Events>(name: E, listener: (event: Events[E]) => void): void {
    this.#listeners.get(name)?.delete(listener as (event: never) => void);
  }

  /** Whether `name` has a listener: a hot path skips building an event nobody reads. */
  has(name: keyof Events): boolean {
    return (this.#listeners.get(name)?.size ?? 0) > 0;
  }

  /** How many listeners there are, over all names. */
  get size(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }

  emit<E extends keyof Events>(name: E, event: Events[E]): void {
    const set = this.#listeners.get(name);
    if (!set || set.size === 0) return;
    for (const listener of set) {
      const report = (error: unknown) => this.#report(String(name), error);
      try {
        const returned: unknown = (listener as (event: Events[E]) => unknown)(event);
        // An async listener's rejection is contained too: it must never become an unhandled rejection.
        if (returned instanceof Promise) returned.catch(report);
      } catch (error) {
        report(error);
      }
    }
  }
}
