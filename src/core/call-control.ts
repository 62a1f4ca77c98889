/**
 * The one way to wait and cancel. One call's limits: the caller's `signal`, its deadline (a per-call
 * `timeoutMs` bounds everything the call waits for) and the client's `close()`. Every step of the call
 * waits through its {@link CallControl}, so that any of the three ends the wait at once with the error
 * that says why; waits outside a call (the Redis limiter's naps, a webhook's poll) use {@link sleep}.
 */
import { OAAbortError, OAConnectionError, type OAError, OATimeoutError } from '../errors.js';

/** The error of a wait that a signal ended: `Aborted while <what>`, with the signal's reason as cause. */
export function abortError(signal: AbortSignal, what: string): OAAbortError {
  return new OAAbortError(`Aborted while ${what}`, { cause: signal.reason });
}

/**
 * A promise, or anything with a `then` method that a callback or a store may return instead: what is
 * worth an `await`. A plain value is used as it is, so that a synchronous step costs no promise.
 */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * Resolves after `ms`, or earlier when `wake` is called; rejects with `stopped()` (by default
 * {@link abortError}) when `signal` fires. The timer keeps the process alive: someone is waiting on it.
 */
export function sleep(
  ms: number,
  signal: AbortSignal | undefined,
  what: string,
  stopped: () => Error = () => abortError(signal as AbortSignal, what),
): { done: Promise<void>; wake: () => void } {
  let wake = () => {};
  const done = new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(stopped());
      return;
    }
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      reject(stopped());
    };
    const timer = setTimeout(() => {
      finish();
      resolve();
    }, ms);
    wake = () => {
      finish();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return { done, wake: () => wake() };
}

/**
 * One abort listener per signal, however many waiters share it: a caller may hand the same
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

/** Why a call was stopped before it could finish. */
export type StopReason = 'aborted' | 'deadline' | 'closed';

/**
 * The live calls of one client: `close()` stops them all, and each caller's `AbortSignal` gets one
 * listener however many calls share it (so no `MaxListenersExceededWarning`, and nothing to remove per
 * call from a signal the caller may keep for hours).
 */
export class CallRegistry {
  readonly #live = new Set<CallControl>();
  readonly #signals = new SignalWatch<CallControl>((signal, calls) => {
    for (const call of calls) call.stop('aborted', signal.reason);
  });
  #closed = false;

  get closed(): boolean {
    return this.#closed;
  }

  /** Refuses a call of a closed client before anything else happens: `what` names it (`POST /path`). */
  refuseIfClosed(what: string): void {
    if (this.#closed)
      throw new OAConnectionError(`${what} not sent: the client is closed`, { failure: 'final' });
  }

  /** Starts tracking a call; `what` names it in errors (`POST /path`). */
  start(
    what: string,
    options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined },
  ): CallControl {
    const control = new CallControl(this, what, options.timeoutMs, options.signal);
    if (this.#closed) control.stop('closed');
    else if (options.signal?.aborted) control.stop('aborted', options.signal.reason);
    else {
      this.#live.add(control);
      if (options.signal) this.#signals.add(options.signal, control);
    }
    return control;
  }

  /** Stops every live call: `close()`. */
  closeAll(): void {
    this.#closed = true;
    for (const control of [...this.#live]) control.stop('closed');
  }

  /** @internal A call has settled. */
  forget(control: CallControl, signal: AbortSignal | undefined): void {
    this.#live.delete(control);
    if (signal) this.#signals.delete(signal, control);
  }
}

/** One call's stop conditions, as seen by its steps. */
export class CallControl {
  readonly #registry: CallRegistry;
  readonly #what: string;
  /** The per-call `timeoutMs`, when one was given. */
  readonly timeoutMs: number | undefined;
  readonly #deadlineAt: number | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped: StopReason | undefined;
  #abortReason: unknown;
  #controller: AbortController | undefined;
  readonly #listeners = new Set<(reason: StopReason) => void>();
  readonly #callerSignal: AbortSignal | undefined;

  constructor(
    registry: CallRegistry,
    what: string,
    timeoutMs: number | undefined,
    callerSignal: AbortSignal | undefined,
  ) {
    this.#registry = registry;
    this.#callerSignal = callerSignal;
    this.#what = what;
    this.timeoutMs = timeoutMs;
    if (timeoutMs !== undefined) {
      this.#deadlineAt = performance.now() + timeoutMs;
      // One timer for the whole call, across attempts and waits; it never keeps a process alive by
      // itself (whatever the call waits on does).
      this.#timer = setTimeout(() => this.stop('deadline'), timeoutMs);
      // workerd's timers are numbers, with no unref.
      (this.#timer as { unref?: () => void }).unref?.();
    }
  }

  /** Why the call was stopped, if it was. */
  get stopped(): StopReason | undefined {
    return this.#stopped;
  }

  /** Whether anything but `close()` can stop the call: a deadline or the caller's signal. */
  get stoppable(): boolean {
    return this.timeoutMs !== undefined || this.#callerSignal !== undefined;
  }

  /** Milliseconds left before the deadline; `undefined` without a per-call `timeoutMs`. */
  remainingMs(): number | undefined {
    return this.#deadlineAt === undefined ? undefined : Math.max(0, this.#deadlineAt - performance.now());
  }

  /** A signal that fires when the call is stopped, for waits that take one (made on first use). */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#stopped) this.#controller.abort(this.error('waiting'));
    }
    return this.#controller.signal;
  }

  /** Runs `listener` once if the call is stopped while it is registered; returns the unregistration. */
  onStop(listener: (reason: StopReason) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** @internal Stops the call: every wait ends, a request in flight is aborted. */
  stop(reason: StopReason, abortReason?: unknown): void {
    if (this.#stopped) return;
    this.#stopped = reason;
    this.#abortReason = abortReason;
    clearTimeout(this.#timer);
    this.#controller?.abort(this.error('waiting'));
    for (const listener of [...this.#listeners]) listener(reason);
  }

  /**
   * The error of a call stopped while it was `doing` something that had not sent the request (waiting
   * in the rate limiter's queue, for a token, for a retry): never `deliveryUnknown`, never retried.
   */
  error(doing: string): OAError {
    const reason = this.#stopped ?? 'aborted';
    return stopError(reason, `${this.#what} not sent: ${describe(reason, this.timeoutMs)} while ${doing}`, {
      cause: this.#abortReason,
      deliveryUnknown: false,
    });
  }

  /** The error of a call stopped while its request was out (`deliveryUnknown` for sends). */
  errorInFlight(deliveryUnknown: boolean): OAError {
    const reason = this.#stopped ?? 'aborted';
    // With deliveryUnknown, the error's message says the send may have been delivered (errors.ts).
    return stopError(
      reason,
      `${this.#what} failed: ${describe(reason, this.timeoutMs)} while the request was out`,
      {
        cause: this.#abortReason,
        deliveryUnknown,
      },
    );
  }

  /** Waits for `promise` (shared with others, so never cancelled) unless the call is stopped first. */
  wait<T>(promise: Promise<T> | T, doing: string): Promise<T> {
    if (!(promise instanceof Promise)) {
      return this.#stopped ? Promise.reject(this.error(doing)) : Promise.resolve(promise);
    }
    if (this.#stopped) {
      // Nobody else may be waiting for it: its failure must not go unhandled.
      promise.catch(() => {});
      return Promise.reject(this.error(doing));
    }
    return new Promise<T>((resolve, reject) => {
      const off = this.onStop(() => reject(this.error(doing)));
      promise.then(resolve, reject).finally(off);
    });
  }

  /** Sleeps `ms` unless the call is stopped first. The timer keeps the process alive: a call waits on it. */
  sleep(ms: number, doing: string): Promise<void> {
    return sleep(ms, this.signal, doing, () => this.error(doing)).done;
  }

  /** The call has settled: its timer and registrations go. */
  end(): void {
    clearTimeout(this.#timer);
    this.#listeners.clear();
    this.#registry.forget(this, this.#callerSignal);
  }
}

function describe(reason: StopReason, timeoutMs: number | undefined): string {
  if (reason === 'deadline') return `its timeoutMs of ${timeoutMs} ms ran out`;
  if (reason === 'closed') return 'the client was closed';
  return 'it was aborted';
}

function stopError(
  reason: StopReason,
  message: string,
  options: { cause: unknown; deliveryUnknown: boolean },
): OAError {
  // Final whatever their class: the caller asked to stop, or its time is up.
  const opts = { ...options, failure: 'final' as const };
  if (reason === 'deadline') return new OATimeoutError(message, opts);
  if (reason === 'closed') return new OAConnectionError(message, opts);
  return new OAAbortError(message, opts);
}
