import {
  OAAbortError,
  OAConnectionError,
  type OAError,
  OAInternalServerError,
  OAJobBusyError,
  OARateLimitError,
} from '../errors.js';
import type { RetryReason } from './events.js';
import { isFailureBeforeSending } from './transport.js';
import { sleep } from './wait.js';

/** How the SDK decides to repeat a call. */
export interface RetryPolicy {
  /** How many failures (connection, 5xx) may be retried; 0 turns every retry off. */
  maxRetries: number;
  /**
   * The longest time a call keeps waiting on answers that ask it to wait (429, `JOB_BUSY`). These do
   * not use up `maxRetries`.
   */
  maxBusyWaitMs: number;
  /** A send or broadcast: repeated only when the API cannot have acted on it. */
  isSend: boolean;
  signal?: AbortSignal | undefined;
  /** The caller's per-call `timeoutMs`: a wait longer than this is not started; the error goes back. */
  maxWaitMs?: number | undefined;
  /**
   * `false` when the request body cannot be sent again (an upload from a one-shot stream): nothing is
   * retried, and a failure that would have been says why.
   */
  replayable: boolean;
  /** Called before each wait. */
  onRetry: (retry: { attempt: number; reason: RetryReason; waitMs: number; error: OAError }) => void;
}

/** Backoff for failures: 500 ms doubling to 8 s, with jitter. */
const FAILURE_BACKOFF = { initialMs: 500, maxMs: 8_000 };
/** Backoff for 429 without Retry-After and for `JOB_BUSY`: 1 s doubling to 15 s, with jitter. */
const BUSY_BACKOFF = { initialMs: 1_000, maxMs: 15_000 };

/**
 * Errors that are final however they look: a nested call already retried them (a login inside a
 * send), or the caller's own `timeoutMs` ran out while the call waited in the rate limiter's queue.
 */
const alreadyRetried = new WeakSet<object>();

const NOT_REPLAYABLE =
  ' (not retried: the file came from a stream, which cannot be read twice; ' +
  'pass a path, Buffer or Blob to let the SDK retry)';

/** Says, in the error's message, that a failure usually retried was not: its body was read once. */
export function explainNotReplayable(error: object): void {
  if (error instanceof Error && !error.message.endsWith(NOT_REPLAYABLE)) error.message += NOT_REPLAYABLE;
}

/** Marks an error as not to be retried by any outer call. */
export function markFinal<E extends object>(error: E): E {
  alreadyRetried.add(error);
  return error;
}

/** Exponential backoff with jitter: a random wait between half and all of the step. */
export function backoffMs(step: number, { initialMs, maxMs }: { initialMs: number; maxMs: number }): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, step - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** The three kinds of failure of "Retries: never send a message twice" (API.md). */
export type FailureKind =
  /** The API answered that it did not act: 429, `JOB_BUSY`. */
  | 'rejected'
  /** Nothing left the client: connection refused, DNS. */
  | 'not_sent'
  /** The request may have been acted on: reset or timeout after it left, 5xx. */
  | 'outcome_unknown'
  /** Anything else (a 4xx verdict, an abort, a bad answer): final. */
  | 'final';

export function classify(error: unknown): FailureKind {
  if (error instanceof OARateLimitError || error instanceof OAJobBusyError) return 'rejected';
  if (error instanceof OAAbortError) return 'final';
  if (isFailureBeforeSending(error)) return 'not_sent';
  if (error instanceof OAInternalServerError || error instanceof OAConnectionError) return 'outcome_unknown';
  return 'final';
}

interface Decision {
  reason: RetryReason;
  waitMs: number;
  /** Counts against `maxRetries`. */
  consumes: boolean;
}

/**
 * Runs `attempt` and repeats it under the policy; the last error is the one the caller sees.
 *
 * - rejected (429, `JOB_BUSY`): retried for every endpoint after `Retry-After` or a backoff, for at
 *   most `maxBusyWaitMs` of waiting in all;
 * - not sent: retried for every endpoint, using up `maxRetries`;
 * - outcome unknown: retried only for requests that have no effect a user would see twice (auth,
 *   uploads); a send rejects with `deliveryUnknown: true`.
 */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: () => RetryPolicy,
): Promise<T> {
  // Most calls succeed at once, so the first attempt runs outside p-retry and the policy is made only
  // when it fails: their set-up cost more than the rest of the SDK's own work on a call.
  try {
    return await attempt(1);
  } catch (error) {
    return retryAfter(error, attempt, policy());
  }
}

/** The rest of {@link withRetries}: p-retry takes the first attempt's failure as its own first. */
async function retryAfter<T>(
  firstError: unknown,
  attempt: (attemptNumber: number) => Promise<T>,
  policy: RetryPolicy,
): Promise<T> {
  const nextAttempt = (attemptNumber: number): Promise<T> =>
    attemptNumber === 1 ? Promise.reject(firstError) : attempt(attemptNumber);

  let busyWaitedMs = 0;
  let busyStep = 0;
  let failureStep = 0;
  let decision: Decision | undefined;

  const kindOfRetry = (error: object): Decision | undefined => {
    const kind = classify(error);
    if (kind === 'rejected') {
      const asked = error instanceof OARateLimitError ? error.retryAfterMs : undefined;
      const waitMs = asked ?? backoffMs(busyStep + 1, BUSY_BACKOFF);
      if (busyWaitedMs + waitMs > policy.maxBusyWaitMs) return undefined;
      return {
        reason: error instanceof OARateLimitError ? 'rate_limited' : 'job_busy',
        waitMs,
        consumes: false,
      };
    }
    if (kind === 'not_sent' || (kind === 'outcome_unknown' && !policy.isSend)) {
      return { reason: kind, waitMs: backoffMs(failureStep + 1, FAILURE_BACKOFF), consumes: true };
    }
    return undefined;
  };

  const decide = (error: unknown, retriesLeft: number): Decision | undefined => {
    if (retriesLeft <= 0 || typeof error !== 'object' || error === null || alreadyRetried.has(error)) {
      return undefined;
    }
    const next = kindOfRetry(error);
    if (!next || (policy.maxWaitMs !== undefined && next.waitMs > policy.maxWaitMs)) return undefined;
    if (!policy.replayable) {
      explainNotReplayable(error);
      return undefined;
    }
    if (next.consumes) failureStep++;
    else {
      busyStep++;
      busyWaitedMs += next.waitMs;
    }
    return next;
  };

  // Loaded with the first failure: most processes never need it.
  const { default: pRetry } = await import('p-retry');
  try {
    return await pRetry(nextAttempt, {
      // Rejected answers do not use up maxRetries (shouldConsumeRetry); their bound is maxBusyWaitMs.
      // p-retry stops everything once maxRetries is used up, so 0 turns retries off.
      retries: policy.maxRetries,
      // The wait happens in onFailedAttempt so that it can follow Retry-After; p-retry's own is zero.
      minTimeout: 0,
      maxTimeout: 0,
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        decision = decide(error, retriesLeft);
        if (!decision) return;
        policy.onRetry({
          attempt: attemptNumber,
          reason: decision.reason,
          waitMs: Math.round(decision.waitMs),
          error: error as OAError,
        });
        await sleep(decision.waitMs, policy.signal, 'waiting to retry').done;
      },
      shouldConsumeRetry: () => decision?.consumes ?? true,
      shouldRetry: () => decision !== undefined,
    });
  } catch (error) {
    if (typeof error === 'object' && error !== null) alreadyRetried.add(error);
    throw error;
  }
}
