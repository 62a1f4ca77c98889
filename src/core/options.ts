/** The client's options and each call's, checked and filled in once, before anything is sent. */
import type * as z from 'zod/mini';
import { runtime } from '#core-runtime';
import { OAConfigError } from '../errors.js';
import { OAClientOptionsSchema } from '../schemas/client-options.js';
import type { OAHooks } from '../schemas/hooks.js';
import { checkConfig } from '../schemas/option-checks.js';
import { type OAResponseInfo, type RequestOptions, RequestOptionsSchema } from '../schemas/requests.js';
import { validate } from '../schemas/validate.js';
import { UPLOAD_ANSWER_TTL_MS, type UploadAnswers } from '../uploads/upload-reuse.js';
import { VERSION } from '../version.js';
import type { TokenStore } from './auth.js';
import type { CallRegistry } from './call-control.js';
import type { CredentialsProvider } from './credentials.js';
import type { Logger, LogLevel } from './logger.js';
import { type Limiter, type RateLimitOptions, type RateLimits, resolveRateLimit } from './rate-limit.js';
import type { DispatcherLike, FetchLike, TransportResponse } from './transport.js';

export type { OAResponseInfo, RequestOptions } from '../schemas/requests.js';

/** The client's `reuseUploads` option, when given as an object. */
export interface ReuseUploadsOptions {
  /**
   * How long the answer of an upload is reused for the same bytes, in ms.
   * @default 86_400_000 (one day)
   */
  ttlMs?: number | undefined;
}

/** Options of `new OAClient(options)`. */
export interface OAClientOptions {
  /**
   * The API's `{base_url}`, e.g. `https://oa.example.com`. Must be https, except for localhost.
   * @default process.env.OA_BASE_URL
   */
  baseUrl?: string | undefined;
  /** @default process.env.OA_API_KEY */
  apiKey?: string | undefined;
  /**
   * At least 6 characters: a shorter one is refused with `OAConfigError`, since it could not be
   * removed from error messages and log lines without mangling them.
   * @default process.env.OA_API_SECRET
   */
  apiSecret?: string | undefined;
  /**
   * The OA account this client speaks for, in a service that connects many (see `createAccounts`): the
   * `oa.account` attribute of its spans, and named in its errors. Any non-empty string: your id for the
   * account. What is kept for the client (token pair, rate limits, ready video tickets, upload answers)
   * is keyed by the OA itself, its base URL and api key, never by this name: every client of one OA
   * shares them (through a `coordination`, across processes), and no other OA's are ever used.
   * @default none
   */
  account?: string | undefined;
  /**
   * Where the api key and secret come from, in place of `apiKey` and `apiSecret` (which it excludes):
   * your store of connected accounts, a secrets manager; an answer may also name the account's
   * `baseUrl` (checked as that option is). Asked before the client first sends (once, however many
   * calls wait), and again once after a login is refused, so that a rotated secret costs
   * one refused login. Refused logins are then spaced out (1 s, doubling up to 30 s: calls in between
   * fail at once with the refusal, nothing sent). An answer of `undefined` or `null`: every call rejects
   * with `OAConfigError`, nothing sent; a provider that throws: the call rejects with an `OAError` whose
   * `cause` is its error. Needs `account` (how errors and spans name the account).
   * @default none: `apiKey` and `apiSecret`
   */
  credentials?: CredentialsProvider | undefined;
  /**
   * How long a lookup of `credentials` may take. One that throws or has not answered by then is an
   * outage of your store, not a verdict on the call: the call rejects with `OACredentialsError`
   * (`deliveryUnknown: false`, nothing sent), the next call asks again, and an outbox job waits and
   * is tried again. Bounds every call's wait for the credentials, also a call without a deadline.
   * @default 10_000
   */
  credentialsTimeoutMs?: number | undefined;
  /**
   * Per-attempt limit in ms, from sending to the last byte of the answer.
   * @default 30_000
   */
  timeoutMs?: number | undefined;
  /**
   * Per-attempt limit in ms for uploads, which may carry 100 MB.
   * @default 600_000 (10 minutes)
   */
  uploadTimeoutMs?: number | undefined;
  /**
   * How many times a failure that is safe to repeat (a connection that never opened; for auth and
   * uploads also a reset, a timeout or a 5xx) is retried. 0 turns every retry off.
   * @default 2
   */
  maxRetries?: number | undefined;
  /**
   * The longest a call keeps waiting, in all, on answers that ask it to wait: 429 (after its
   * `Retry-After`, or a backoff) and `JOB_BUSY`. These retries do not use up `maxRetries`.
   * @default 60_000
   */
  maxBusyWaitMs?: number | undefined;
  /**
   * The client's own rate limiter, kept at the API's limits so that calls wait in the client rather
   * than meet a 429: every 60 s span holds at most 200 requests, and at most 20 uploads.
   * `false` turns it off (for example when a proxy already limits).
   * @default { general: { max: 200, windowMs: 60_000 }, upload: { max: 20, windowMs: 60_000 } }
   */
  rateLimit?: RateLimitOptions | false | undefined;
  /**
   * State shared by many processes that speak to the same OA (api key and base URL): one token pair
   * (one renewal at a time) and the rate limits counted together. `createRedisCoordination()` from `oa-messaging/redis` makes one.
   * It replaces `tokenStore`.
   * @default none: this process alone
   */
  coordination?: Coordination | undefined;
  /**
   * A user of yours (a test account) who receives a video first when a broadcast holds a ticket not
   * known to be ready: the only way the API tells that a transcode has finished is a single-user
   * video send that succeeds. Without it such a broadcast is refused before anything is sent.
   * @default none
   */
  videoProbeUserId?: string | undefined;
  /**
   * Upload a file once: `uploadImage`, `uploadAudio` and `uploadVideo` (and `sendImageFile`,
   * `sendAudioFile`, `sendVideoFile`, the bot's `replyWithImage` ...) give the answer of an earlier
   * upload of the same bytes (their SHA-256, under the endpoint and the api key) instead of uploading
   * them again, for `ttlMs`; uploads of the same bytes at the same time make one request. Kept in this
   * client's memory (the 500 most recently used), and with a `coordination` also there, for every
   * process with the api key. A path, bytes, an `ArrayBuffer` or a Blob is read once more to hash it;
   * a stream (Node Readable, web `ReadableStream`) is uploaded every time. A failed upload keeps
   * nothing. `false` uploads every time.
   * @default { ttlMs: 86_400_000 } (on, answers reused for one day: the API states no lifetime for
   * stored media)
   */
  reuseUploads?: boolean | ReuseUploadsOptions | undefined;
  /**
   * Where the token pair lives.
   * @default an in-memory store
   */
  tokenStore?: TokenStore | undefined;
  /**
   * An undici Dispatcher (a proxy agent, a custom Agent; undici 6 or 7). The caller owns it: `close()`
   * leaves it open.
   * @default a keep-alive undici Agent owned by the client; an `EnvHttpProxyAgent` when `HTTPS_PROXY`
   * or `HTTP_PROXY` is set (`NO_PROXY` is honoured)
   */
  dispatcher?: DispatcherLike | undefined;
  /**
   * A `fetch` to send with, on any runtime: `globalThis.fetch` (then msw handlers see the client's
   * requests on Node too), a runtime's own, or a wrapper of yours. It cannot tell whether a request
   * that failed had left, so such a failed send rejects with `deliveryUnknown: true` and is not
   * retried. Uploads go as the runtime's `FormData`; a one-shot stream is read into memory first (up
   * to the endpoint's limit). Not together with `dispatcher`.
   * @default undici on Node (see `dispatcher`); the global `fetch` on other runtimes
   */
  fetch?: FetchLike | undefined;
  /**
   * Receives request, retry and token log lines; never a secret. `console` fits.
   * @default `console` when `OA_LOG` (or `logLevel`) is set, else silent
   */
  logger?: Logger | undefined;
  /**
   * The least important lines the logger receives: `debug` (each request and answer), `info`, `warn`
   * (retries), `error`, or `off`.
   * @default process.env.OA_LOG; without it, every line reaches a `logger` you pass
   */
  logLevel?: LogLevel | undefined;
  /**
   * Headers sent with every request, e.g. a tracing header. They cannot replace the ones the SDK
   * owns (`authorization`, `content-type`, `content-length`, `accept`, `host`, `user-agent`; for the
   * last, see `appInfo`).
   * @default none
   */
  defaultHeaders?: Record<string, string> | undefined;
  /**
   * Your application, named at the end of the User-Agent (`oa-messaging/1.0.0 node/v20.19.0
   * MyApp/2.1 (+https://example.com)`), so that the API's operators can tell who calls.
   * @default none
   */
  appInfo?: AppInfo | undefined;
  /**
   * Refresh the access token this long before it expires (at most half its lifetime).
   * @default 300_000 (5 minutes)
   */
  refreshBeforeExpiryMs?: number | undefined;
  /**
   * Allow a plain-http `baseUrl` on a host other than localhost. Tokens and the key secret would travel
   * in clear: only for a trusted network.
   * @default false
   */
  allowInsecureHttp?: boolean | undefined;
  /**
   * Hooks around every call the client makes (its own token renewals too, `state.renewal`), each
   * given one state object: `aroundCall` (a middleware around the whole call, e.g. to open a span with
   * the call inside it), `beforeSend` (just before each attempt's request leaves; one that fails keeps
   * it from leaving) and `notDelivered` (after an attempt that certainly did not deliver). A call's
   * own `hooks` run after these; the client's tracing, when it traces, runs before them.
   * @default none
   */
  hooks?: OAHooks | undefined;
  /**
   * Where the client's spans go, in place of the provider registered globally with
   * `@opentelemetry/api` (an optional peer dependency; see "Tracing and metrics" in docs/observability.md).
   * @default the global tracer provider, when `@opentelemetry/api` is installed and one is registered
   */
  tracerProvider?: OATracerProvider | undefined;
  /**
   * Where the client's metrics go, in place of the global meter provider.
   * @default the global meter provider, when `@opentelemetry/api` is installed and one is registered
   */
  meterProvider?: OAMeterProvider | undefined;
}

export interface ResolvedOptions {
  baseUrl: URL;
  /** Empty when the credentials come from a provider. */
  apiKey: string;
  apiSecret: string;
  timeoutMs: number;
  uploadTimeoutMs: number;
  maxRetries: number;
  maxBusyWaitMs: number;
  rateLimit: RateLimits | false;
  refreshBeforeExpiryMs: number;
  /** How long an upload's answer is reused, or `false` for never. */
  reuseUploadsTtlMs: number | false;
  /** Filled in from the environment: the default dispatcher goes through a proxy. */
  proxyFromEnv: boolean;
}

/** The base URL a client uses: the option, else `OA_BASE_URL` (the one place that default is read). */
export function baseUrlOf(
  baseUrl: string | undefined,
  env: Record<string, string | undefined> = globalThis.process?.env ?? {},
): string | undefined {
  return baseUrl ?? env.OA_BASE_URL;
}

/** Fills in defaults and the environment, and refuses a configuration that cannot work safely. */
export function resolveOptions(
  options: OAClientOptions,
  env: Record<string, string | undefined> = globalThis.process?.env ?? {},
): ResolvedOptions {
  const provided = options.credentials !== undefined;
  if (provided) credentialOptionsProblem(options);
  else if (options.account !== undefined && (typeof options.account !== 'string' || options.account === '')) {
    throw new OAConfigError('account must be a non-empty string (your id for the OA account)');
  }
  const given = {
    ...options,
    baseUrl: baseUrlOf(options.baseUrl, env),
    // A provider's credentials are checked when it answers; these stand in for the schema's checks.
    apiKey: provided ? PROVIDED : (options.apiKey ?? env.OA_API_KEY),
    apiSecret: provided ? PROVIDED : (options.apiSecret ?? env.OA_API_SECRET),
  };
  checkConfig(OAClientOptionsSchema, given);
  // The schema refused a missing one.
  const { baseUrl, apiKey, apiSecret } = given as { baseUrl: string; apiKey: string; apiSecret: string };
  return {
    baseUrl: new URL(baseUrl),
    apiKey: provided ? '' : apiKey,
    apiSecret: provided ? '' : apiSecret,
    timeoutMs: options.timeoutMs ?? 30_000,
    uploadTimeoutMs: options.uploadTimeoutMs ?? 600_000,
    maxRetries: Math.floor(options.maxRetries ?? 2),
    maxBusyWaitMs: options.maxBusyWaitMs ?? 60_000,
    rateLimit: resolveRateLimit(options.rateLimit),
    refreshBeforeExpiryMs: options.refreshBeforeExpiryMs ?? 5 * 60_000,
    reuseUploadsTtlMs:
      options.reuseUploads === false
        ? false
        : ((options.reuseUploads === true ? undefined : options.reuseUploads?.ttlMs) ?? UPLOAD_ANSWER_TTL_MS),
    proxyFromEnv: proxyFromEnv(env),
  };
}

/** Stands in for a provider's api key and secret in the schema's checks. */
const PROVIDED = '(from the credentials provider)';

/** Whether the environment names a proxy, which the default dispatcher then goes through. */
function proxyFromEnv(env: Record<string, string | undefined> = globalThis.process?.env ?? {}): boolean {
  return Boolean(env.HTTPS_PROXY || env.https_proxy || env.HTTP_PROXY || env.http_proxy);
}

/** Refuses a `credentials` provider given with the key or secret, or without an `account`. */
function credentialOptionsProblem(options: OAClientOptions): void {
  if (typeof options.credentials !== 'function') {
    throw new OAConfigError('credentials must be a function answering { apiKey, apiSecret } (or undefined)');
  }
  if (options.apiKey !== undefined || options.apiSecret !== undefined) {
    throw new OAConfigError('credentials replaces apiKey and apiSecret: give one or the other');
  }
  if (typeof options.account !== 'string' || options.account === '') {
    throw new OAConfigError(
      'credentials needs account (a non-empty string): how its errors and spans name the account',
    );
  }
}

/**
 * Checks the per-call options (and that the client is open) before anything else happens: a mistake
 * there must not cost a login. Returns them as given.
 */
export function checkOptions<O extends RequestOptions>(
  ctx: { calls: CallRegistry },
  endpoint: { name: string; path: string },
  options: O | undefined,
  schema: z.ZodMiniType = RequestOptionsSchema,
): O {
  if (options !== undefined) validate(schema, options, `${endpoint.name} options`);
  ctx.calls.refuseIfClosed(`POST ${endpoint.path}`);
  return options ?? ({} as O);
}

/** The caller's `onResponse`: one that throws must not turn a delivered send into a failure. */
export function tellResponse(
  ctx: { logger: Logger },
  onResponse: (info: OAResponseInfo) => void,
  info: OAResponseInfo,
) {
  try {
    onResponse(info);
  } catch (error) {
    ctx.logger.warn?.(
      `oa-messaging: an onResponse callback threw (${error instanceof Error ? error.message : String(error)}); the call succeeded`,
    );
  }
}

/** What a caller's `onResponse` learns of the answer that settled its call. */
export function answerOf(res: TransportResponse, attempt: number): OAResponseInfo {
  const id = res.headers['x-request-id'];
  return { status: res.status, headers: res.headers, requestId: Array.isArray(id) ? id[0] : id, attempt };
}

/**
 * State shared by every process that uses one api key (`coordination` option; `oa-messaging/redis`
 * provides one): the token pair, one renewal at a time, the rate limits counted together, and the
 * video tickets known to be ready.
 */
export interface Coordination {
  /** Where the shared token pair lives, keyed by OA (`<apiKey>@<baseUrl>`). */
  tokenStore: TokenStore;
  /**
   * Runs `renew` while holding the renewal lock of `key`, so that one process at a time logs in or
   * refreshes. The lock expires on its own if its holder dies. `renew` must read the store first:
   * another process may have renewed while this one waited.
   */
  withRenewalLock<T>(key: string, renew: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** A limiter whose windows count the requests of every process with the same `key`. */
  createLimiter(key: string, limits: RateLimits): Limiter;
  /**
   * The video tickets known to be ready, for every process: a `sendVideo` success in one lets the
   * others broadcast that ticket without a probe.
   * @default none: each process remembers its own
   */
  readyVideos?: ReadyVideos | undefined;
  /**
   * The answers of uploads, for every process: an upload of some bytes in one lets the others reuse
   * its answer for the same bytes (the client's `reuseUploads`). Each answer is kept for the `ttlMs`
   * the client gives.
   * @default none: each client remembers its own
   */
  uploadAnswers?: UploadAnswers | undefined;
}

/**
 * Where the tickets known to be ready are kept, by OA (`<apiKey>@<baseUrl>`) (`Coordination.readyVideos`; the Redis
 * coordination keeps them for every process). A ticket is never forgotten on purpose, but a store may
 * let old ones go: a forgotten ticket only costs one more probe.
 */
export interface ReadyVideos {
  /** Records that `ticket_id`, of the account of `key`, has been delivered at least once. */
  markReady(key: string, ticket_id: string): Promise<void>;
  /** Whether `ticket_id`, of the account of `key`, has been delivered at least once. */
  isReady(key: string, ticket_id: string): Promise<boolean>;
}

/**
 * A tracer provider (`@opentelemetry/api`'s `TracerProvider`: the SDK's `NodeTracerProvider`,
 * `BasicTracerProvider`...), typed loosely so that the package's types need no `@opentelemetry/api`.
 */
export interface OATracerProvider {
  /** Returns the tracer of an instrumentation library. */
  getTracer(name: string, version?: string, options?: object): unknown;
}

/** A meter provider (`@opentelemetry/api`'s `MeterProvider`: the SDK's `MeterProvider`). */
export interface OAMeterProvider {
  /** Returns the meter of an instrumentation library. */
  getMeter(name: string, version?: string, options?: object): unknown;
}

/** Your application, as the User-Agent names it after the SDK (Stripe's `appInfo`). */
export interface AppInfo {
  /** e.g. `MyShop`; letters, digits and `.-_` only. */
  name: string;
  /** e.g. `2.1.0`. */
  version?: string | undefined;
  /** Where to learn more about it, or reach its operators. */
  url?: string | undefined;
}

/**
 * The headers each request carries, made once per client from its options (and the bearer ones once
 * per token), so that the hot path spreads no object per call: `headersOf` in `pipeline.ts` picks them.
 */
export interface RequestHeaders {
  /** Every request's: the caller's `defaultHeaders`, `accept` and `user-agent`. */
  readonly common: Readonly<Record<string, string>>;
  /** The headers of a JSON request without a token (a login or refresh). */
  readonly json: Readonly<Record<string, string>>;
  /** The JSON headers with the last token sent. */
  bearer: { token: string; headers: Record<string, string> } | undefined;
}

/** A client's {@link RequestHeaders}. */
export function requestHeaders(
  app: AppInfo | undefined,
  defaults: Record<string, string> | undefined,
): RequestHeaders {
  const common = { ...defaults, accept: 'application/json', 'user-agent': userAgent(app) };
  return { common, json: { ...common, 'content-type': 'application/json' }, bearer: undefined };
}

/** `oa-messaging/1.2.3 node/v20.19.0` (or the runtime's name), then the application when there is one. */
function userAgent(app: AppInfo | undefined): string {
  const sdk = `oa-messaging/${VERSION} ${runtime()}`;
  if (!app) return sdk;
  const version = app.version ? `/${app.version.replace(/[^\w.+-]/g, '')}` : '';
  const url = app.url ? ` (+${app.url.replace(/[()\r\n]/g, '')})` : '';
  return `${sdk} ${app.name}${version}${url}`;
}
