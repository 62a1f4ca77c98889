/**
 * What the pipeline needs of a transport: one request sent and its answer read, every failure mapped
 * to an SDK error whose retry class says whether the request may have left. Two implement it: undici
 * on Node (`undici-transport.ts`), `fetch` elsewhere or when the caller gives one (`fetch-transport.ts`).
 * Nothing here loads either.
 */
import type { Readable } from 'node:stream';
import type { NodeReadable, PreparedUpload, UploadBody, UploadProgress } from '../uploads/types.js';
import type { CallControl } from './call-control.js';

/** One HTTP attempt, as the transport sees it. */
export interface TransportRequest {
  url: URL;
  headers: Readonly<Record<string, string>>;
  /** JSON text, or an upload's multipart body as this transport made it ({@link Transport.multipart}). */
  body: string | Readable | FormData;
  /** Per-attempt limit, from the first byte sent to the last byte of the answer read. */
  timeoutMs: number;
  /**
   * A send or broadcast: when the outcome of such a request is unknown, the error says
   * `deliveryUnknown: true`.
   */
  isSend: boolean;
  /** Called once the request begins to leave: from then on it may have reached the server. */
  onStart?: (() => void) | undefined;
  /** Called once the whole body is known to have gone out, where the transport cannot count it itself. */
  onSent?: (() => void) | undefined;
}

/** The answer: its status, headers and body text (an error answer's body only up to a cap). */
export interface TransportResponse {
  status: number;
  /** Names in lower case; a header sent more than once is an array (undici's shape). */
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body was longer than the SDK keeps: `text` is its start, and the rest was not read. */
  truncated: boolean;
}

/**
 * One account's share of one origin's connection pool, in a transport that the accounts of
 * `createAccounts` send through (`maxConnectionsPerAccount`): a request takes a place before it enters
 * the pool, or waits in line, in order, for one; its place goes back when it ends.
 */
export interface PoolShare {
  /** The most of the account's requests in the pool at once. */
  readonly max: number;
  /** The account's requests in the pool now: on a socket, or waiting in the pool for one. */
  readonly held: number;
  /** Takes a place at once (`true`) when the account holds fewer than `max` and none of its requests waits. */
  take(): boolean;
  /**
   * Puts a request in line: `admit` is called, holding a place, once the requests ahead of it had
   * theirs. The request's place in line is returned, for {@link PoolShare.leave}.
   */
  wait(admit: () => void): ShareWaiter;
  /** A request in line was given up: it leaves the line, never admitted. */
  leave(waiter: ShareWaiter): void;
  /** A request that held a place has ended: the place goes to the next in line. */
  release(): void;
}

/** A request in line for a place in its account's {@link PoolShare}. */
export interface ShareWaiter {
  /** When it began to wait, on `performance.now()`'s clock: its error says how long it waited. */
  readonly since: number;
}

/** One account's shares of the pools of a transport it shares with other accounts: one per origin. */
export interface PoolShares {
  shareOf(origin: string): PoolShare;
}

/** The way a client sends: chosen once per client (see `ClientContext`), the same for every call. */
export interface Transport {
  /**
   * Sends one request and reads its answer; the call's deadline, signal and `close()` abort it.
   * `shares`: the sending account's shares of this transport's pools, when the accounts of
   * `createAccounts` share it and it caps its pools ({@link Transport.connectionsPerOrigin}); the
   * attempt's time and the call's stop conditions bound a wait for a place as any other wait of it.
   */
  send(
    request: TransportRequest,
    control: CallControl | undefined,
    shares?: PoolShares,
  ): Promise<TransportResponse>;
  /**
   * The most sockets the transport keeps to one origin, when it caps them itself (its own undici
   * Agent, made for `createAccounts`); `undefined` when it does not (a caller's dispatcher or `fetch`,
   * a runtime's `fetch`, which pool by themselves).
   */
  readonly connectionsPerOrigin?: number | undefined;
  /**
   * The multipart body of one upload attempt, in the form this transport sends: a form-data stream for
   * undici, a `FormData` for fetch.
   */
  multipart(
    upload: PreparedUpload,
    onProgress: ((progress: UploadProgress) => void) | undefined,
  ): UploadBody | Promise<UploadBody>;
  /** Releases what the transport opened itself (sockets); what the caller gave stays theirs. */
  close(): Promise<void>;
}

/**
 * How much of an error answer is kept: enough for any JSON error of this API and the start of a
 * proxy's HTML page. The rest is not read (the connection is dropped), so a 400 MB error page costs
 * nothing.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;
/** How much of a successful answer is read; this API's answers are a few KB. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** The first `code` on a failure or its causes (a system error's `ECONNRESET`, undici's `UND_ERR_*`). */
export function errorCode(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && typeof e === 'object' && depth < 4; e = (e as Error).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

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
  /** JSON text, or a multipart stream (a Node `Readable`) for uploads. */
  body: string | NodeReadable;
}

/**
 * Any undici `Dispatcher` (`Agent`, `Pool`, `ProxyAgent`, `EnvHttpProxyAgent`, `MockAgent`), of undici 6
 * or 7: the SDK calls its `dispatch` only, with either handler interface.
 */
export interface DispatcherLike {
  /**
   * Sends one request, reporting to `handler` (undici's handler interface of either major version).
   * `options` is a {@link DispatchRequest} whose `body` is typed `never` here: so undici's `Dispatcher`,
   * whose types name node:stream's `Readable`, fits without these types naming `node:stream` (which a
   * project without Node's types, a Worker, cannot resolve). A wrapper passes it on to undici as it is.
   */
  dispatch(options: DispatchRequest & { body: never }, handler: object): boolean;
}

/**
 * A `fetch` implementation: the global one, or one of the caller's (a test's msw, a runtime's own, a
 * wrapper that adds tracing).
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
