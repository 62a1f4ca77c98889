import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { isOAError, OAConnectionError, type OAError, OATimeoutError } from '../errors.js';
import type { CallControl } from './call-control.js';
import { type DispatcherLike, eitherHandler } from './dispatcher.js';
import { classifyAs } from './failure.js';

/** One HTTP attempt, as the transport sees it. */
export interface TransportRequest {
  url: URL;
  headers: Record<string, string>;
  /** JSON text, or a multipart stream (form-data) for uploads. */
  body: string | Readable;
  /** The dispatcher to send with, given undici once it is loaded. */
  dispatcher: (loaded: Undici) => DispatcherLike;
  /** Per-attempt limit, from the first byte sent to the last byte of the answer read. */
  timeoutMs: number;
  /**
   * A send or broadcast: when the outcome of such a request is unknown, the error says
   * `deliveryUnknown: true`.
   */
  isSend: boolean;
  /** Called once undici begins to send: from then on the request may have reached the server. */
  onStart?: (() => void) | undefined;
}

/** The answer: its status, headers and body text (an error answer's body only up to a cap). */
export interface TransportResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body was longer than the SDK keeps: `text` is its start, and the rest was not read. */
  truncated: boolean;
}

/**
 * How much of an error answer is kept: enough for any JSON error of this API and the start of a
 * proxy's HTML page. The rest is not read (the connection is dropped), so a 400 MB error page costs
 * nothing.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** How much of a successful answer is read; this API's answers are a few KB. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

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

/** The dispatcher, loading undici first when it is not loaded yet. */
export function dispatcherOf(req: TransportRequest): DispatcherLike | Promise<DispatcherLike> {
  if (undici) return req.dispatcher(undici);
  return loadUndici().then((loaded) => req.dispatcher(loaded));
}

/**
 * Sends one request and reads the answer, mapping every failure to an SDK error. It goes through
 * `Dispatcher.dispatch` with a handler that collects the body: no response stream and no abort
 * emitter per request; the attempt's timer and the call's stop conditions abort through the
 * controller undici hands over.
 */
export function send(
  req: TransportRequest,
  dispatcher: DispatcherLike,
  control: CallControl | undefined,
): Promise<TransportResponse> {
  return new Promise<TransportResponse>((resolve, reject) => {
    const what = `POST ${req.url.pathname}`;
    let controller: Dispatcher.DispatchController | undefined;
    /** The request may have left: undici has started writing it. */
    let started = false;
    let settled = false;
    let status = 0;
    let headers: TransportResponse['headers'] = {};
    let keep = MAX_BODY_BYTES;
    let kept = 0;
    let truncated = false;
    const chunks: Buffer[] = [];
    let timer: NodeJS.Timeout | undefined;
    let offStop: (() => void) | undefined;

    const finish = (error: OAError | undefined, abortReason?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      offStop?.();
      if (abortReason && controller && !controller.aborted) controller.abort(abortReason);
      if (error) reject(error);
      else resolve({ status, headers, text: Buffer.concat(chunks).toString('utf8'), truncated });
    };
    /** Ends the attempt with `error`, dropping the connection. */
    const stopWith = (error: OAError) => finish(error, error);

    const deliveryUnknown = () => req.isSend && started;
    // The attempt's own limit, unless the call's deadline comes first (it stops the call itself).
    const remaining = control?.remainingMs();
    if (remaining === undefined || req.timeoutMs < remaining) {
      timer = setTimeout(() => {
        const error = new OATimeoutError(`${what} timed out after ${req.timeoutMs} ms`, {
          deliveryUnknown: deliveryUnknown(),
        });
        // Nothing was written yet: safe to send again.
        stopWith(started ? error : classifyAs(error, 'not_sent'));
      }, req.timeoutMs);
    }
    if (control) {
      offStop = control.onStop(() => stopWith(control.errorInFlight(deliveryUnknown())));
      if (control.stopped) {
        stopWith(control.error('sending'));
        return;
      }
    }

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(ctl) {
        controller = ctl;
        started = true;
        // Given up before undici began: it must not send now.
        if (settled) ctl.abort(new Error('The attempt was abandoned before it was sent'));
        else req.onStart?.();
      },
      onResponseStart(_ctl, statusCode, responseHeaders) {
        status = statusCode;
        headers = responseHeaders;
        if (statusCode < 200 || statusCode >= 300) keep = MAX_ERROR_BODY_BYTES;
      },
      onResponseData(ctl, chunk) {
        if (settled) return;
        const room = keep - kept;
        if (chunk.length <= room) {
          chunks.push(chunk);
          kept += chunk.length;
          return;
        }
        chunks.push(chunk.subarray(0, room));
        kept = keep;
        truncated = true;
        // The answer is known; the rest of the body is not worth the wait or the memory.
        finish(undefined);
        ctl.abort(new Error('The rest of the answer was not read'));
      },
      onResponseEnd() {
        finish(undefined);
      },
      onResponseError(_ctl, error) {
        if (settled) return;
        finish(mapFailure(error, req, started));
      },
    };

    try {
      dispatcher.dispatch(
        {
          origin: req.url.origin,
          path: `${req.url.pathname}${req.url.search}`,
          method: 'POST',
          headers: req.headers,
          body: req.body,
        },
        // A dispatcher of another undici (an app's undici 6) may speak the older handler interface.
        undici && dispatcher instanceof undici.Dispatcher ? handler : eitherHandler(handler),
      );
    } catch (error) {
      finish(mapFailure(error, req, false));
    }
  });
}

/**
 * Maps a transport failure to the SDK's error, with what is known of the request's fate. A failure to
 * connect names the host, so that a mistyped `OA_BASE_URL` shows.
 */
function mapFailure(error: unknown, req: TransportRequest, started: boolean): OAError {
  // The body itself refused to go on (an upload stream past its size limit): that is the answer.
  if (isOAError(error)) return error;
  const { isSend } = req;
  const what = `POST ${req.url.pathname}`;
  const code = errorCode(error);
  // These codes mean "never connected" only before undici began to write: on an open connection
  // (a network that drops mid-request) the request may already have been acted on.
  if (!started && code && NOT_SENT_CODES.has(code)) {
    return classifyAs(
      new OAConnectionError(`${what} failed: could not connect to ${req.url.host} (${code})`, {
        cause: error,
      }),
      'not_sent',
    );
  }
  const reason = error instanceof Error ? error.message : String(error);
  const failure = new OAConnectionError(`${what} failed: ${reason}${code ? ` (${code})` : ''}`, {
    cause: error,
    deliveryUnknown: isSend && started,
  });
  return started ? failure : classifyAs(failure, 'not_sent');
}
