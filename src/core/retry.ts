import pRetry from 'p-retry';
import {
  OAAbortError,
  OAConnectionError,
  OAInternalServerError,
  OAJobBusyError,
  OARateLimitError,
} from '../errors.js';
import type { Logger } from './logger.js';
import { isFailureBeforeSending } from './transport.js';

export interface RetryPolicy {
  /** How many times a failed attempt may be repeated. */
  maxRetries: number;
  /** A send or broadcast: repeated only when the API cannot have acted on it. */
  isSend: boolean;
  signal?: AbortSignal | undefined;
  logger: Logger;
  /** For log lines: `POST /api/v2/...`. */
  what: string;
}

/** First backoff step; doubles each retry up to {@link MAX_BACKOFF_MS}, with full jitter. */
const INITIAL_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 8_000;
/** A server that asks for a longer wait than this is not waited for: the error goes to the caller. */
const MAX_RETRY_AFTER_MS = 60_000;

/** Errors a nested call already retried (a login inside a send): not retried a second time. */
const alreadyRetried = new WeakSet<object>();

/**
 * "Retries: never send a message twice" (API.md). A failure is retried when the API did not act on
 * the request (rate limited, busy, never connected), and, for requests that have no effect a user
 * would see twice (auth, uploads), also when the outcome is unknown (reset, timeout, 5xx).
 */
export function isSafeToRetry(error: unknown, isSend: boolean): boolean {
  if (typeof error !== 'object' || error === null || alreadyRetried.has(error)) return false;
  if (error instanceof OARateLimitError) return (error.retryAfterMs ?? 0) <= MAX_RETRY_AFTER_MS;
  if (error instanceof OAJobBusyError) return true;
  if (isFailureBeforeSending(error)) return true;
  if (isSend) return false;
  return error instanceof OAInternalServerError || error instanceof OAConnectionError;
}

function backoffMs(retryNumber: number, error: unknown): number {
  if (error instanceof OARateLimitError && error.retryAfterMs !== undefined) return error.retryAfterMs;
  const ceiling = Math.min(MAX_BACKOFF_MS, INITIAL_BACKOFF_MS * 2 ** (retryNumber - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Waits `ms`, or rejects with {@link OAAbortError} as soon as `signal` fires. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new OAAbortError('Aborted while waiting to retry', { cause: signal.reason }));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(new OAAbortError('Aborted while waiting to retry', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Runs `attempt` and repeats it under the policy; the last error is the one the caller sees. */
export async function withRetries<T>(
  attempt: (attemptNumber: number) => Promise<T>,
  policy: RetryPolicy,
): Promise<T> {
  try {
    return await pRetry(attempt, {
      retries: policy.maxRetries,
      // The wait happens in onFailedAttempt so that it can follow Retry-After; p-retry's own is zero.
      minTimeout: 0,
      maxTimeout: 0,
      shouldRetry: ({ error }) => isSafeToRetry(error, policy.isSend),
      onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
        if (retriesLeft <= 0 || !isSafeToRetry(error, policy.isSend)) return;
        const waitMs = backoffMs(attemptNumber, error);
        policy.logger.warn?.(
          `oa-messaging: ${policy.what} failed (${error.message}); retrying in ${Math.round(waitMs)} ms`,
          {
            attempt: attemptNumber,
            reason: error.name,
            waitMs: Math.round(waitMs),
          },
        );
        await sleep(waitMs, policy.signal);
      },
    });
  } catch (error) {
    if (typeof error === 'object' && error !== null) alreadyRetried.add(error);
    throw error;
  }
}
