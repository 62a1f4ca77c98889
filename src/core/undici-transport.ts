/**
 * The transport on Node: one request through an undici `Dispatcher` (the caller's, or the one the
 * transport makes on first use), its answer read, every failure mapped to an SDK error whose retry
 * class says whether the request may have left. Uploads stream through form-data.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { isOAError, OAConnectionError, type OAError, OATimeoutError } from '../errors.js';
import type { PreparedUpload, UploadBody, UploadProgress } from '../uploads/types.js';
import type { CallControl } from './call-control.js';
import {
  type DispatcherLike,
  errorCode,
  MAX_BODY_BYTES,
  MAX_ERROR_BODY_BYTES,
  type PoolShare,
  type PoolShares,
  type ShareWaiter,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

export type { DispatcherLike } from './transport.js';

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

type Undici = typeof import('undici');
let undici: Undici | undefined;

/**
 * undici is loaded by the first request, not at import: it is most of what importing the SDK would
 * cost, and a process that only builds messages or parses webhooks never needs it.
 */
async function loadUndici(): Promise<Undici> {
  undici ??= await import('undici');
  return undici;
}

/**
 * The dispatcher a client sends with: the caller's, which stays theirs, else its own, made on first
 * use (so that constructing a client opens nothing) and destroyed by {@link UndiciTransport.close}.
 */
export class UndiciTransport implements Transport {
  readonly #given: DispatcherLike | undefined;
  readonly #proxyFromEnv: boolean;
  readonly #connections: number | undefined;
  #own: Dispatcher | undefined;
  /** Its own dispatcher's cap per origin; `undefined` with the caller's dispatcher or no cap. */
  readonly connectionsPerOrigin: number | undefined;

  /**
   * `connections`: the most sockets its own dispatcher keeps per origin (a request beyond waits for one
   * in undici's queue, which its attempt's time and the call's deadline bound; see {@link send});
   * `undefined`: no cap.
   */
  constructor(given: DispatcherLike | undefined, proxyFromEnv: boolean, connections?: number) {
    this.#given = given;
    this.#proxyFromEnv = proxyFromEnv;
    this.#connections = connections;
    this.connectionsPerOrigin = given === undefined ? connections : undefined;
  }

  /** The dispatcher, loading undici first when it is not loaded yet. */
  dispatcher(): DispatcherLike | Promise<DispatcherLike> {
    if (this.#given) return this.#given;
    if (undici) return this.#ownDispatcher(undici);
    return loadUndici().then((loaded) => this.#ownDispatcher(loaded));
  }

  #ownDispatcher(loaded: Undici): Dispatcher {
    this.#own ??= defaultDispatcher(loaded, this.#proxyFromEnv, this.#connections);
    return this.#own;
  }

  send(
    request: TransportRequest,
    control: CallControl | undefined,
    shares?: PoolShares,
  ): Promise<TransportResponse> {
    const dispatcher = this.dispatcher();
    return dispatcher instanceof Promise
      ? dispatcher.then((ready) => send(request, ready, control, shares))
      : send(request, dispatcher, control, shares);
  }

  /** A form-data body that streams the file: memory stays flat whatever its size. */
  multipart(
    upload: PreparedUpload,
    onProgress: ((progress: UploadProgress) => void) | undefined,
  ): Promise<UploadBody> {
    // Loaded by the first upload, as form-data is: importing the SDK does not load node:stream.
    return import('../uploads/node-multipart.js').then(({ streamingMultipart }) =>
      streamingMultipart(upload, onProgress),
    );
  }

  /** Releases the transport's own sockets; a dispatcher the caller gave stays open. */
  async close(): Promise<void> {
    if (this.#own) await this.#own.destroy();
  }
}

/**
 * Sends one request and reads the answer, mapping every failure to an SDK error. It goes through
 * `Dispatcher.dispatch` with a handler that collects the body: no response stream and no abort
 * emitter per request; the attempt's timer and the call's stop conditions abort through the
 * controller undici hands over. A request waiting for a socket of a capped pool has not started: the
 * attempt's timer and the call's deadline run while it waits, a failure there is classed not sent, and
 * the request, given up, is aborted by `onRequestStart` before undici writes a byte of it. With
 * `shares` (an account of `createAccounts`), a request whose account holds its share of the origin's
 * pool waits in line first, before undici sees it, under the same timer and stop conditions.
 */
function send(
  req: TransportRequest,
  dispatcher: DispatcherLike,
  control: CallControl | undefined,
  shares: PoolShares | undefined,
): Promise<TransportResponse> {
  return new Promise<TransportResponse>((resolve, reject) => {
    const what = `POST ${req.url.pathname}`;
    const { origin } = req.url;
    /** The account's share of the origin's pool: the request holds a place in it while it is in the pool. */
    const share = shares?.shareOf(origin);
    /** The request's place in line, while it waits for a place in `share`. */
    let waiting: ShareWaiter | undefined;
    /** The request holds a place in `share`. */
    let admitted = false;
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
      // Its place goes to the account's next request in line, once its own socket is let go above.
      if (waiting !== undefined) share?.leave(waiting);
      else if (admitted) share?.release();
    };
    /** Ends the attempt with `error`, dropping the connection. */
    const stopWith = (error: OAError) => finish(error, error);

    const deliveryUnknown = () => req.isSend && started;
    // The attempt's own limit, unless the call's deadline comes first (it stops the call itself).
    const remaining = control?.remainingMs();
    if (remaining === undefined || req.timeoutMs < remaining) {
      timer = setTimeout(() => {
        const error = started
          ? new OATimeoutError(`${what} timed out after ${req.timeoutMs} ms`, {
              deliveryUnknown: deliveryUnknown(),
            })
          : // Nothing was written yet: safe to send again.
            new OATimeoutError(
              `${what} not sent: waited ${req.timeoutMs} ms ${forConnection(share, waiting, req.url)}`,
              { failure: 'not_sent' },
            );
        stopWith(error);
      }, req.timeoutMs);
    }
    if (control) {
      offStop = control.onStop(() =>
        stopWith(
          started
            ? control.errorInFlight(deliveryUnknown())
            : control.error(`waiting ${waitedFor(waiting)}${forConnection(share, waiting, req.url)}`),
        ),
      );
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

    if (share === undefined || share.take()) {
      admitted = share !== undefined;
      dispatch(dispatcher, req, origin, handler, finish);
      return;
    }
    // The account holds its share of this pool: the request waits for one of its places here, before
    // undici sees it, so that given up it was certainly not sent. In order: no request jumps the line.
    waiting = share.wait(() => {
      waiting = undefined;
      admitted = true;
      dispatch(dispatcher, req, origin, handler, finish);
    });
  });
}

/** Hands the request to the dispatcher; one refused at once (a closed dispatcher) was not sent. */
function dispatch(
  dispatcher: DispatcherLike,
  req: TransportRequest,
  origin: string,
  handler: Dispatcher.DispatchHandler,
  finish: (error: OAError) => void,
): void {
  try {
    dispatcher.dispatch(
      {
        origin,
        path: `${req.url.pathname}${req.url.search}`,
        method: 'POST',
        headers: req.headers as Record<string, string>,
        // A string or a Readable; typed `never` for the dispatcher (see DispatcherLike).
        body: req.body as never,
      },
      // A dispatcher of another undici (an app's undici 6) may speak the older handler interface.
      undici && dispatcher instanceof undici.Dispatcher ? handler : eitherHandler(handler),
    );
  } catch (error) {
    finish(mapFailure(error, req, false));
  }
}

/**
 * Where a request that never got a socket waited, for the error of a wait given up: in line for its
 * account's share of the pool, else for a socket of the pool (or the connection it was opening).
 */
function forConnection(share: PoolShare | undefined, waiting: ShareWaiter | undefined, url: URL): string {
  return waiting !== undefined && share !== undefined
    ? `for a connection of the accounts' pool (this account holds ${share.held} of its ${share.max} to ${url.host})`
    : `for a connection to ${url.host}`;
}

/** How long a request in line for its account's share has waited (`120 ms `); nothing out of line. */
function waitedFor(waiting: ShareWaiter | undefined): string {
  return waiting === undefined ? '' : `${Math.round(performance.now() - waiting.since)} ms `;
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
    return new OAConnectionError(`${what} failed: could not connect to ${req.url.host} (${code})`, {
      cause: error,
      failure: 'not_sent',
    });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new OAConnectionError(`${what} failed: ${reason}${code ? ` (${code})` : ''}`, {
    cause: error,
    deliveryUnknown: isSend && started,
    failure: started ? undefined : 'not_sent',
  });
}

/**
 * The client's own dispatcher when none is given: a keep-alive Agent, or, when `HTTPS_PROXY` or
 * `HTTP_PROXY` is set, undici's `EnvHttpProxyAgent` (which honours `NO_PROXY`), as curl and most SDKs
 * do. The client's own per-attempt timer bounds every request; undici's idle timers would cut a long
 * upload short. With `connections`, each origin's pool keeps at most that many sockets.
 */
function defaultDispatcher(
  undici: typeof import('undici'),
  proxyFromEnv: boolean,
  connections: number | undefined,
): Dispatcher {
  const options =
    connections === undefined
      ? { headersTimeout: 0, bodyTimeout: 0 }
      : { headersTimeout: 0, bodyTimeout: 0, connections };
  return proxyFromEnv ? new undici.EnvHttpProxyAgent(options) : new undici.Agent(options);
}

/**
 * The handler for a dispatcher of another undici than the SDK's own: undici 7 calls the
 * `onRequestStart` family, undici 6 the `onConnect` family, so this one answers both, turning the
 * older calls into the newer.
 */
function eitherHandler(handler: Dispatcher.DispatchHandler): object {
  let abort: ((reason: Error) => void) | undefined;
  let aborted = false;
  const controller = {
    get aborted() {
      return aborted;
    },
    reason: null,
    paused: false,
    abort(reason: Error) {
      aborted = true;
      abort?.(reason);
    },
    pause() {},
    resume() {},
  } as unknown as Dispatcher.DispatchController;
  return {
    ...handler,
    onConnect(abortWith: (reason: Error) => void) {
      abort = abortWith;
      handler.onRequestStart?.(controller, {});
    },
    onHeaders(status: number, raw: Buffer[], _resume: () => void, statusText: string) {
      handler.onResponseStart?.(controller, status, parseRawHeaders(raw), statusText);
      return true;
    },
    onData(chunk: Buffer) {
      handler.onResponseData?.(controller, chunk);
      return true;
    },
    onComplete() {
      handler.onResponseEnd?.(controller, {});
    },
    onError(error: Error) {
      handler.onResponseError?.(controller, error);
    },
  };
}

/** undici 6 hands headers over as `[name, value, name, value...]` buffers. */
function parseRawHeaders(raw: Buffer[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = String(raw[i]).toLowerCase();
    const value = String(raw[i + 1]);
    const known = headers[name];
    headers[name] = known === undefined ? value : Array.isArray(known) ? [...known, value] : [known, value];
  }
  return headers;
}
