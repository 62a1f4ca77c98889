/**
 * One retry loop with one budget per call ("Retries: never send a message twice" in API.md). Every
 * retryable failure draws on it: answers that ask to wait (429, `JOB_BUSY`) on the total wait
 * `maxBusyWaitMs`, failures (not sent; for auth and uploads also outcome unknown) on `maxRetries`, a
 * 401 on its one replay; and every wait ends with the call's deadline, `close()` or `signal`.
 */
import { type OAError, OARateLimitError } from '../errors.js';
import type { CallControl } from './call-control.js';
import type { RetryReason } from './events.js';
import { failureKind } from './failure.js';

/** How the SDK may repeat one call. */
export interface RetryPolicy {
  /** How many failures (not sent; outcome unknown when not a send) may be retried; 0: no retry at all. */
  maxRetries: number;
  /** The longest a call waits, in all, on answers that ask it to wait (429, `JOB_BUSY`). */
  maxBusyWaitMs: number;
  /** A send or broadcast: repeated only when the API cannot have acted on it. */
  isSend: boolean;
  /** The request carries an access token: a 401 renews it and replays the request once. */
  usesToken: boolean;
  /**
   * `false` once the body cannot be sent again (an upload from a one-shot stream that an attempt has
   * read): nothing is retried then, and a failure that would have been says why. A failure before the
   * body was first made (waiting for a token, say) is retried as usual.
   */
  replayable: () => boolean;
}

/** A retry, decided. */
export interface Retry {
  reason: RetryReason;
  waitMs: number;
  /** The attempt that failed. */
  attempt: number;
  error: OAError;
}

/** Backoff for failures: 500 ms doubling to 8 s, with jitter. */
const FAILURE_BACKOFF = { initialMs: 500, maxMs: 8_000 };
/** Backoff for a 429 without a usable Retry-After and for `JOB_BUSY`: 1 s doubling to 15 s, with jitter. */
const BUSY_BACKOFF = { initialMs: 1_000, maxMs: 15_000 };
/**
 * A Retry-After under this (zero, a date in the past, a negative or tiny number) is not followed: the
 * call waits a backoff instead (and it counts in the wait budget), so that a server that always says
 * "now" cannot make it spin.
 */
export const MIN_RETRY_AFTER_MS = 100;

/** The least time a retry must leave before the call's deadline for its attempt. */
const MIN_ATTEMPT_MS = 250;

const NOT_REPLAYABLE =
  ' (not retried: the file came from a stream, which cannot be read twice; ' +
  'pass a path, Buffer or Blob to let the SDK retry)';

/** Says, in the error's message, that a failure usually retried was not: its body was read once. */
function explainNotReplayable(error: unknown): void {
  if (error instanceof Error && !error.message.endsWith(NOT_REPLAYABLE)) error.message += NOT_REPLAYABLE;
}

/** Exponential backoff with jitter: a random wait between half and all of the step. */
export function backoffMs(step: number, { initialMs, maxMs }: { initialMs: number; maxMs: number }): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, step - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** What one call has left to spend on retries. */
class RetryBudget {
  readonly #policy: RetryPolicy;
  #retriesLeft: number;
  #busyWaitLeftMs: number;
  #busyStep = 0;
  #failureStep = 0;
  #replayed = false;

  constructor(policy: RetryPolicy) {
    this.#policy = policy;
    this.#retriesLeft = policy.maxRetries;
    this.#busyWaitLeftMs = policy.maxBusyWaitMs;
  }

  /** The retry `error` allows, drawn from the budget; `undefined` when it is final. */
  next(error: unknown): { reason: RetryReason; waitMs: number } | undefined {
    const kind = failureKind(error);
    if (kind === 'final') return undefined;
    const policy = this.#policy;
    if (kind === 'unauthorized') {
      if (!policy.usesToken || this.#replayed) return undefined;
      if (!policy.replayable()) return void explainNotReplayable(error);
      this.#replayed = true;
      return { reason: 'unauthorized', waitMs: 0 };
    }
    if (policy.maxRetries === 0) return undefined;
    if (kind === 'rejected') {
      const asked = error instanceof OARateLimitError ? error.retryAfterMs : undefined;
      const waitMs =
        asked !== undefined && asked >= MIN_RETRY_AFTER_MS
          ? asked
          : backoffMs(++this.#busyStep, BUSY_BACKOFF);
      if (waitMs > this.#busyWaitLeftMs) return undefined;
      if (!policy.replayable()) return void explainNotReplayable(error);
      this.#busyWaitLeftMs -= waitMs;
      return { reason: error instanceof OARateLimitError ? 'rate_limited' : 'job_busy', waitMs };
    }
    if (kind === 'outcome_unknown' && policy.isSend) return undefined;
    if (this.#retriesLeft <= 0) return undefined;
    if (!policy.replayable()) return void explainNotReplayable(error);
    this.#retriesLeft--;
    return { reason: kind, waitMs: backoffMs(++this.#failureStep, FAILURE_BACKOFF) };
  }
}

/**
 * Runs `attempt` and repeats it under `policy`; the last error is the one the caller sees. A wait that
 * would outlast the call's deadline, or leave its attempt under 250 ms, is not started: the error goes
 * back at once.
 */
export async function withRetries<T>(
  attempt: (attemptNumber: number, previous: Retry | undefined) => Promise<T>,
  policy: RetryPolicy,
  control: CallControl,
  onRetry: (retry: Retry) => void,
): Promise<T> {
  let budget: RetryBudget | undefined;
  let previous: Retry | undefined;
  for (let attemptNumber = 1; ; attemptNumber++) {
    try {
      return await attempt(attemptNumber, previous);
    } catch (error) {
      // Made on the first failure only: most calls succeed at once.
      budget ??= new RetryBudget(policy);
      const next = control.stopped ? undefined : budget.next(error);
      const left = control.remainingMs();
      // A wait that would leave the next attempt next to no time is not started either: that attempt
      // would end in the deadline's OATimeoutError instead of the answer the caller can act on.
      if (!next || (left !== undefined && next.waitMs > left - MIN_ATTEMPT_MS)) throw error;
      previous = {
        ...next,
        waitMs: Math.round(next.waitMs),
        attempt: attemptNumber,
        error: error as OAError,
      };
      onRetry(previous);
      if (next.waitMs > 0) await control.sleep(next.waitMs, 'waiting to retry');
    }
  }
}
