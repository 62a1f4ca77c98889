/**
 * The dispatcher a client sends with, typed by what the SDK uses of it, so that an app's own undici
 * (6 or 7, deduplicated or not) passes its `Agent` or `ProxyAgent` without a cast.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';

/** What a request handed to a dispatcher holds. */
export interface DispatchRequest {
  /** e.g. `https://oa.example.com`. */
  origin: string;
  /** The endpoint path (and query). */
  path: string;
  /** Always `POST` in this API. */
  method: 'POST';
  /** The request headers, names in lower case. */
  headers: Record<string, string>;
  /** JSON text, or a multipart stream for uploads. */
  body: string | Readable;
}

/**
 * Any undici `Dispatcher` (`Agent`, `Pool`, `ProxyAgent`, `EnvHttpProxyAgent`, `MockAgent`), of undici 6
 * or 7: the SDK calls its `dispatch` only, with either handler interface.
 */
export interface DispatcherLike {
  /** Sends one request, reporting to `handler` (undici's handler interface of either major version). */
  dispatch(options: DispatchRequest, handler: object): boolean;
}

/**
 * The client's own dispatcher when none is given: a keep-alive Agent, or, when `HTTPS_PROXY` or
 * `HTTP_PROXY` is set, undici's `EnvHttpProxyAgent` (which honours `NO_PROXY`), as curl and most SDKs
 * do. The client's own per-attempt timer bounds every request; undici's idle timers would cut a long
 * upload short.
 */
export function defaultDispatcher(undici: typeof import('undici'), proxyFromEnv: boolean): Dispatcher {
  const options = { headersTimeout: 0, bodyTimeout: 0 };
  return proxyFromEnv ? new undici.EnvHttpProxyAgent(options) : new undici.Agent(options);
}

/**
 * The handler for a dispatcher of another undici than the SDK's own: undici 7 calls the
 * `onRequestStart` family, undici 6 the `onConnect` family, so this one answers both, turning the
 * older calls into the newer.
 */
export function eitherHandler(handler: Dispatcher.DispatchHandler): object {
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
