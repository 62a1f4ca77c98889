/**
 * One call's limits: the caller's `signal`, its deadline (a per-call `timeoutMs` bounds everything the
 * call waits for) and the client's `close()`. Every step of the call waits through it, so that any of
 * the three ends the wait at once with the error that says why.
 */
import { OAAbortError, OAConnectionError, type OAError, OATimeoutError } from '../errors.js';
import type { OAResponseInfo } from './request-options.js';
import { SignalWatch } from './signal-watch.js';

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

  /** Starts tracking a call; `what` names it in errors (`POST /path`). */
  start(
    what: string,
    options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined },
    beforeSend?: () => unknown,
  ) {
    const control = new CallControl(this, what, options.timeoutMs, options.signal);
    control.beforeSend = beforeSend;
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
  /** Runs just before each attempt's request leaves (see `BEFORE_SEND`). */
  beforeSend: (() => unknown) | undefined;
  /** Runs when an attempt whose request left certainly did not deliver (see `NOT_DELIVERED`). */
  notDelivered: (() => unknown) | undefined;
  /** The caller's `onResponse`, told of the answer that settled the call. */
  onResponse: ((response: OAResponseInfo) => void) | undefined;

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
      this.#timer.unref();
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
    const what = deliveryUnknown ? `${this.#what} may have been delivered` : `${this.#what} failed`;
    return stopError(reason, `${what}: ${describe(reason, this.timeoutMs)} while the request was out`, {
      cause: this.#abortReason,
      deliveryUnknown,
    });
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
    if (this.#stopped) return Promise.reject(this.error(doing));
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        resolve();
      }, ms);
      const off = this.onStop(() => {
        clearTimeout(timer);
        reject(this.error(doing));
      });
    });
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
