/**
 * What a failure means for the retry loop, decided once where it is classified and carried on the
 * error ("Retries: never send a message twice" in API.md).
 */
import {
  FAILURE_KIND,
  OAAbortError,
  OAApiError,
  OAConnectionError,
  type OAFailureKind,
  OAInternalServerError,
  OAJobBusyError,
  OARateLimitError,
  OAUnauthorizedError,
} from '../errors.js';

export type FailureKind =
  /** The API answered that it did not act and asked to wait: 429, `JOB_BUSY`. */
  | 'rejected'
  /** 401: the access token was refused; one renewal and one replay. */
  | 'unauthorized'
  /** Nothing left the client: safe to send again, sends included. */
  | 'not_sent'
  /** The request may have been acted on: reset or timeout after it left, 5xx. */
  | 'outcome_unknown'
  /** Anything else (a 4xx verdict, an abort, a bad answer, a closed client): final. */
  | 'final';

/** Sets the kind of a failure where it is classified: the retry loop reads it, nothing else decides. */
export function classifyAs<E extends object>(error: E, kind: OAFailureKind): E {
  Object.defineProperty(error, FAILURE_KIND, { value: kind, writable: true, configurable: true });
  return error;
}

/** The kind carried on the error, else the one its class stands for. */
export function failureKind(error: unknown): FailureKind {
  if (typeof error !== 'object' || error === null) return 'final';
  const carried = (error as Record<symbol, unknown>)[FAILURE_KIND];
  if (carried === 'not_sent' || carried === 'final') return carried;
  if (error instanceof OARateLimitError || error instanceof OAJobBusyError) return 'rejected';
  if (error instanceof OAUnauthorizedError) return 'unauthorized';
  if (error instanceof OAAbortError) return 'final';
  if (error instanceof OAInternalServerError || error instanceof OAConnectionError) return 'outcome_unknown';
  return 'final';
}

/**
 * Whether an attempt that failed with `error` certainly did not deliver: nothing left the client, or
 * the API answered that it did not act (429, `JOB_BUSY`, 401, any other 4xx verdict). A 5xx, a reset
 * or a timeout after the request left, an abort in flight or a bad 2xx answer may have delivered.
 */
export function certainlyNotDelivered(error: unknown): boolean {
  const kind = failureKind(error);
  if (kind === 'not_sent' || kind === 'rejected' || kind === 'unauthorized') return true;
  return kind === 'final' && error instanceof OAApiError && error.status >= 400 && error.status < 500;
}
