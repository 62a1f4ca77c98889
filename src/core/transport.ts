import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { isOAError, OAAbortError, OAConnectionError, OATimeoutError } from '../errors.js';

/** One HTTP attempt, as the transport sees it. */
export interface TransportRequest {
  url: URL;
  headers: Record<string, string>;
  /** JSON text, or a multipart stream (form-data) for uploads. */
  body: string | Readable;
  /** The dispatcher to send with, given undici once it is loaded. */
  dispatcher: (loaded: Undici) => Dispatcher;
  /** Per-attempt limit, from the first byte sent to the last byte of the answer read. */
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /**
   * A send or broadcast: when the outcome of such a request is unknown, the error says
   * `deliveryUnknown: true`.
   */
  isSend: boolean;
}

/** The answer, read whole (JSON answers of this API are small). */
export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/**
 * Failures where the request cannot have reached the server: nothing was connected, so the request
 * is safe to send again whatever it does.
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const failedBeforeSending = new WeakSet<OAConnectionError>();

/**
 * Marks a failure that happened before the request could leave (a shared limiter or token store that
 * could not be reached): retried like a refused connection, for sends too.
 */
export function markNotSent(error: OAConnectionError): OAConnectionError {
  failedBeforeSending.add(error);
  return error;
}

/** `true` when the connection failed before any byte of the request left (connection refused, DNS). */
export function isFailureBeforeSending(error: unknown): boolean {
  return error instanceof OAConnectionError && failedBeforeSending.has(error);
}

function errorCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as Error).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

export type Undici = typeof import('undici');
let undici: Undici | undefined;

/**
 * undici is loaded by the first request, not at import: it is most of what importing the SDK would
 * cost, and a process that only builds messages or parses webhooks never needs it.
 */
async function loadUndici(): Promise<Undici> {
  undici ??= await import('undici');
  return undici;
}

/** Aborts one attempt, by its timer or the caller's signal. */
class AttemptAbort extends EventEmitter {
  timedOut = false;
}

function timeOut(attempt: AttemptAbort): void {
  attempt.timedOut = true;
  attempt.emit('abort');
}

/** Sends one request with undici and reads the answer; maps every failure to an SDK error. */
export async function send(req: TransportRequest): Promise<TransportResponse> {
  const caller = req.signal;
  if (caller?.aborted)
    throw new OAAbortError('The request was aborted before it was sent', { cause: caller.reason });

  // undici takes an EventEmitter as the abort source (`signal: AbortSignal | EventEmitter`): making an
  // AbortController and listening on it cost more than all the rest of the SDK's own work on a call.
  const loaded = undici ?? (await loadUndici());
  const attempt = new AttemptAbort();
  const timer = setTimeout(timeOut, req.timeoutMs, attempt);
  const onCallerAbort = caller && (() => attempt.emit('abort'));
  if (onCallerAbort) caller.addEventListener('abort', onCallerAbort, { once: true });
  try {
    const res = await loaded.request(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      dispatcher: req.dispatcher(loaded),
      signal: attempt,
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  } catch (error) {
    const what = `POST ${req.url.pathname}`;
    if (caller?.aborted) {
      throw new OAAbortError(`${what} was aborted`, { cause: caller.reason, deliveryUnknown: req.isSend });
    }
    // The body itself refused to go on (an upload stream past its size limit): that is the answer.
    if (isOAError(error)) throw error;
    if (attempt.timedOut) {
      throw new OATimeoutError(`${what} timed out after ${req.timeoutMs} ms`, {
        cause: error,
        deliveryUnknown: req.isSend,
      });
    }
    const code = errorCode(error);
    if (code && NOT_SENT_CODES.has(code)) {
      throw markNotSent(
        new OAConnectionError(`${what} failed: could not connect (${code})`, { cause: error }),
      );
    }
    const reason = error instanceof Error ? error.message : String(error);
    throw new OAConnectionError(`${what} failed: ${reason}${code ? ` (${code})` : ''}`, {
      cause: error,
      deliveryUnknown: req.isSend,
    });
  } finally {
    clearTimeout(timer);
    if (onCallerAbort) caller.removeEventListener('abort', onCallerAbort);
  }
}
