/**
 * The one way a call flows, in the order the server sees it, read top to bottom:
 *
 *   check params and options (before any I/O)
 *   -> retry loop (one budget, one deadline)
 *      -> per attempt: rate-limit slot -> access token -> transport -> map the answer -> parse
 *
 * None of the steps knows which endpoint it serves. A login or refresh is one exchange (slot ->
 * transport -> answer) that the token step runs: no retry loop inside a retry loop.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { type Endpoint, endpoints } from '../endpoints.js';
import {
  errorFromAnswer,
  isOAError,
  OAConnectionError,
  type OAError,
  OAResponseValidationError,
  OAValidationError,
  reissued,
} from '../errors.js';
import { RequestOptionsSchema, UploadOptionsSchema } from '../schemas/requests.js';
import type { TokenPair } from '../schemas/responses.js';
import { formatIssues, toIssues, validate } from '../schemas/validate.js';
import { prepareUpload } from '../uploads/prepare.js';
import { discardInput } from '../uploads/source.js';
import type { FileInput, PreparedUpload, UploadKind, UploadOptions } from '../uploads/types.js';
import { MemoryTokenStore, type TokenEndpoints, TokenManager } from './auth.js';
import { type CallControl, CallRegistry } from './call-control.js';
import { ClientEvents } from './events.js';
import { type Logger, loggerFor } from './logger.js';
import {
  type AppInfo,
  type OAClientOptions,
  type OAResponseInfo,
  type RequestOptions,
  resolveOptions,
  userAgent,
} from './options.js';
import { type Limiter, type Permit, RateLimiter, SlotLoan } from './rate-limit.js';
import { redactJson, redactText } from './redact.js';
import { type Retry, type RetryState, withRetries } from './retry.js';
import { send, Transport, type TransportResponse } from './transport.js';

/**
 * A per-call hook, under this symbol in the options, run once per attempt just before the request
 * leaves (after the rate-limit slot and the token): a durable queue records there that the send may
 * have gone out. Not part of the public options; `Symbol.for` so that every bundle of the package
 * shares it. A hook that throws keeps the request from leaving (the call fails as not sent).
 */
export const BEFORE_SEND: unique symbol = Symbol.for('oa-messaging.beforeSend') as never;

/** The hook of {@link BEFORE_SEND}, if the options carry one. */
function beforeSendOf(options: object | undefined): (() => unknown) | undefined {
  const hook = (options as Record<symbol, unknown> | undefined)?.[BEFORE_SEND];
  return typeof hook === 'function' ? (hook as () => unknown) : undefined;
}

/**
 * Everything a client's calls share, made once from its options: the context every step reads.
 * Constructing it opens nothing (no socket, no timer).
 */
export class Pipeline implements TokenEndpoints {
  readonly apiKey: string;
  readonly #apiSecret: string;
  readonly #baseUrl: URL;
  /** Each endpoint's URL, made once: nothing reads or changes it after. */
  readonly #urls = new Map<string, URL>();
  readonly headers: RequestHeaders;
  readonly timeoutMs: number;
  readonly uploadTimeoutMs: number;
  readonly maxRetries: number;
  readonly maxBusyWaitMs: number;
  /** `undefined` when `rateLimit: false`. */
  readonly limiter: Limiter | undefined;
  readonly transport: Transport;
  readonly events: ClientEvents;
  readonly logger: Logger;
  readonly tokens: TokenManager;
  readonly calls = new CallRegistry();

  constructor(options: OAClientOptions) {
    const resolved = resolveOptions(options);
    const { apiKey, rateLimit } = resolved;
    const { coordination } = options;
    this.apiKey = apiKey;
    this.#apiSecret = resolved.apiSecret;
    this.#baseUrl = resolved.baseUrl;
    this.logger = loggerFor(options.logger, options.logLevel);
    this.events = new ClientEvents(this.logger);
    // No limiter starts a timer before its first request.
    this.limiter = rateLimit
      ? (coordination?.createLimiter(apiKey, rateLimit) ?? new RateLimiter(rateLimit))
      : undefined;
    this.tokens = new TokenManager({
      store: coordination?.tokenStore ?? options.tokenStore ?? new MemoryTokenStore(),
      lock: coordination,
      key: apiKey,
      endpoints: this,
      refreshBeforeExpiryMs: resolved.refreshBeforeExpiryMs,
      logger: this.logger,
      events: this.events,
    });
    this.headers = new RequestHeaders(options.appInfo, options.defaultHeaders);
    this.transport = new Transport(options.dispatcher, resolved.proxyFromEnv);
    this.timeoutMs = resolved.timeoutMs;
    this.uploadTimeoutMs = resolved.uploadTimeoutMs;
    this.maxRetries = resolved.maxRetries;
    this.maxBusyWaitMs = resolved.maxBusyWaitMs;
  }

  /** Credentials to scrub from anything that leaves the SDK (messages, logs, error bodies). */
  secrets(): string[] {
    return [this.#apiSecret, ...this.tokens.knownSecrets()];
  }

  /** The URL of an endpoint. */
  url(path: string): URL {
    let url = this.#urls.get(path);
    if (!url) {
      const base = this.#baseUrl;
      url = new URL(base);
      url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
      this.#urls.set(path, url);
    }
    return url;
  }

  /**
   * Checks the per-call options (and that the client is open) before anything else happens: a mistake
   * there must not cost a login. Returns them as given.
   */
  checkOptions<O extends RequestOptions>(
    endpoint: { name: string; path: string },
    options: O | undefined,
    schema: z.ZodType = RequestOptionsSchema,
  ): O {
    if (options !== undefined) validate(schema, options, `${endpoint.name} options`);
    if (this.calls.closed) {
      throw new OAConnectionError(`POST ${endpoint.path} not sent: the client is closed`, {
        failure: 'final',
      });
    }
    return options ?? ({} as O);
  }

  /** A JSON call: params and options checked, then the retry loop. */
  call<R extends z.ZodType>(
    endpoint: Endpoint<z.ZodType, R>,
    params: unknown,
    options?: RequestOptions,
  ): Promise<z.output<R>> {
    try {
      const checked = this.checkOptions(endpoint, options);
      const text = JSON.stringify(validate(endpoint.params, params, `${endpoint.name} params`));
      return run(new Call(this, endpoint, checked, { body: text, headers: this.headers.json }));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** An upload: options checked, the file read and checked, then the retry loop with a fresh body each attempt. */
  async upload<R extends z.ZodType>(
    kind: UploadKind,
    endpoint: Endpoint<z.ZodType, R>,
    file: FileInput,
    options: UploadOptions | undefined,
  ): Promise<z.output<R>> {
    let checked: UploadOptions;
    try {
      checked = this.checkOptions(endpoint, options, UploadOptionsSchema);
    } catch (error) {
      // Refused before it was read: a stream handed over is not left open.
      discardInput(file);
      throw error;
    }
    const prepared = await prepareUpload(kind, file, checked);
    try {
      return await run(new Call(this, endpoint, checked, prepared));
    } finally {
      prepared.discard();
    }
  }

  /** `generateToken()`: endpoint 1 as a call of the caller's; the client keeps the pair. */
  async generateToken(options: RequestOptions | undefined): Promise<TokenPair> {
    const params = { api_key: this.apiKey, api_secret: this.#apiSecret };
    const pair = await this.call(endpoints.generateToken, params, options);
    await this.tokens.save(pair);
    return pair;
  }

  /** `refreshToken()`: endpoint 2 with the given refresh token, else the one held. */
  async refreshToken(refresh_token: string | undefined, options: RequestOptions | undefined) {
    const token = refresh_token ?? (await this.tokens.currentRefreshToken());
    if (token === undefined) {
      throw new OAValidationError(
        'refreshToken: no refresh token held (none yet, or the API gave none); call generateToken()',
        [{ path: ['refresh_token'], message: 'Required' }],
      );
    }
    const pair = await this.call(endpoints.refreshToken, { refresh_token: token }, options);
    await this.tokens.save(pair);
    return pair;
  }

  /** Endpoint 1 for a renewal (see {@link tokenExchange}). */
  login(slot: Permit | undefined): Promise<TokenPair> {
    const params = { api_key: this.apiKey, api_secret: this.#apiSecret };
    return tokenExchange(this, endpoints.generateToken, params, slot);
  }

  /** Endpoint 2 for a renewal (see {@link tokenExchange}). */
  refresh(refresh_token: string, slot: Permit | undefined): Promise<TokenPair> {
    return tokenExchange(this, endpoints.refreshToken, { refresh_token }, slot);
  }

  /**
   * Stops every call (each wait ends now; requests in flight are aborted, and a call that never sent
   * its request says so) and releases the client's own sockets.
   */
  async close(): Promise<void> {
    if (this.calls.closed) return;
    this.calls.closeAll();
    this.limiter?.stop();
    await this.transport.close();
  }
}

/** What one attempt sends: the same JSON text each time, or a fresh multipart stream. */
interface AttemptBody {
  body: string | Readable;
  /** Content headers: `content-type`, and `content-length` when known. */
  headers: Readonly<Record<string, string>>;
  dispose?(): void;
}

/** One call as it goes down the path: made once per call; each step reads it, each attempt updates it. */
class Call<R extends z.ZodType> implements RetryState {
  readonly pipeline: Pipeline;
  readonly endpoint: Endpoint<z.ZodType, R>;
  readonly control: CallControl;
  readonly bucket: 'general' | 'upload';
  /** This attempt's limit. */
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly maxBusyWaitMs: number;
  readonly isSend: boolean;
  readonly usesToken: boolean;
  /** Runs just before each attempt's request leaves (see `BEFORE_SEND`). */
  readonly beforeSend: (() => unknown) | undefined;
  /** The caller's `onResponse`, told of the answer that settled the call. */
  readonly onResponse: ((response: OAResponseInfo) => void) | undefined;
  readonly #body: AttemptBody | PreparedUpload;
  readonly #onProgress: UploadOptions['onProgress'];
  /** An upload's body has been made (read) once. */
  #read = false;
  attempt = 0;
  previous: Retry | undefined = undefined;
  /** The rate-limit slot the attempt holds. */
  permit: Permit | undefined = undefined;
  /** The access token the attempt sends: a 401 renews from this one. */
  token: string | undefined = undefined;

  constructor(
    pipeline: Pipeline,
    endpoint: Endpoint<z.ZodType, R>,
    options: UploadOptions,
    body: AttemptBody | PreparedUpload,
  ) {
    this.pipeline = pipeline;
    this.endpoint = endpoint;
    this.control = pipeline.calls.start(`POST ${endpoint.path}`, options);
    this.bucket = endpoint.bucket;
    this.timeoutMs = this.bucket === 'upload' ? pipeline.uploadTimeoutMs : pipeline.timeoutMs;
    this.maxRetries = options.maxRetries ?? pipeline.maxRetries;
    this.maxBusyWaitMs = pipeline.maxBusyWaitMs;
    this.isSend = endpoint.isSend;
    this.usesToken = endpoint.auth;
    this.beforeSend = beforeSendOf(options);
    this.onResponse = options.onResponse;
    this.#body = body;
    this.#onProgress = options.onProgress;
  }

  /** This attempt's body: the JSON text, or the upload's multipart stream made afresh. */
  makeBody(): AttemptBody {
    const body = this.#body;
    if (!('discard' in body)) return body;
    this.#read = true;
    const made = body.body(this.#onProgress);
    return { body: made.body as unknown as Readable, headers: made.headers, dispose: () => made.dispose() };
  }

  /** Whether the body can be sent again: JSON always; an upload from a one-shot stream until read. */
  replayable(): boolean {
    const body = this.#body;
    return !('discard' in body) || body.replayable || !this.#read;
  }
}

/** The call: its retry loop, its control ended however it ends. */
async function run<R extends z.ZodType>(call: Call<R>): Promise<z.output<R>> {
  try {
    return await withRetries(call, attemptOnce, reportRetry);
  } finally {
    call.control.end();
  }
}

function reportRetry(call: Call<z.ZodType>, retry: Retry): void {
  const { endpoint, pipeline } = call;
  pipeline.logger.warn?.(
    `oa-messaging: POST ${endpoint.path} failed (${retry.error.message}); retrying in ${retry.waitMs} ms`,
    { attempt: retry.attempt, reason: retry.reason, waitMs: retry.waitMs },
  );
  pipeline.events.emit('retry', { endpoint: endpoint.name, path: endpoint.path, ...retry });
}

/** A token that is stale again by the time its call gets a slot is renewed at most this often. */
const MAX_RENEWALS_PER_ATTEMPT = 2;

/** One attempt: slot -> token -> exchange. */
async function attemptOnce<R extends z.ZodType>(call: Call<R>): Promise<z.output<R>> {
  // A replay after a 401 goes ahead of the queue: it already waited its turn once.
  const replay = call.previous?.reason === 'unauthorized';
  call.permit = await takeSlot(call, replay);
  if (call.usesToken) call.token = await tokenFor(call, replay);
  return exchange(call);
}

/**
 * A slot in the client's rate limiter: at once when one is free, else after a wait that the call's
 * deadline, signal and `close()` can end (the slot, granted later, then goes straight back).
 */
async function takeSlot(call: Call<z.ZodType>, first: boolean): Promise<Permit | undefined> {
  const { limiter } = call.pipeline;
  if (!limiter) return undefined;
  const { control, endpoint, bucket } = call;
  let granted: Permit | Promise<Permit>;
  try {
    // A call that can be stopped (a deadline, a signal) leaves the queue when it is, so that its
    // place neither holds up the rest nor keeps the process alive; close() stops the limiter itself.
    granted = limiter.acquire(bucket, { first, signal: control.stoppable ? control.signal : undefined });
  } catch (error) {
    throw notSent(error, `POST ${endpoint.path} not sent: the rate limiter failed`);
  }
  if (!(granted instanceof Promise)) return granted;
  let permit: Permit;
  try {
    permit = await control.wait(granted, `waiting for the ${bucket} rate limit`);
  } catch (error) {
    // Given up while queued: whenever the slot comes, it goes straight to the next request.
    granted.then(
      (late) => late.release(),
      () => {},
    );
    throw notSent(error, `POST ${endpoint.path} not sent: the rate limiter failed`);
  }
  if (permit.waitedMs > 0) {
    const waitedMs = Math.round(permit.waitedMs);
    call.pipeline.logger.debug?.(
      `oa-messaging: POST ${endpoint.path} waited ${waitedMs} ms for the ${bucket} rate limit`,
    );
    call.pipeline.events.emit('rateLimitWait', {
      endpoint: endpoint.name,
      path: endpoint.path,
      bucket,
      waitedMs,
    });
  }
  return permit;
}

/**
 * The access token, taken after the slot so that it is fresh when the request leaves. No fresh token:
 * wait for the one renewal, lending it this call's slot if this call starts it (the lender then queues
 * again, ahead of the rest). A call that holds its slot too long for the new token to stay fresh
 * renews again.
 */
async function tokenFor(call: Call<z.ZodType>, replay: boolean): Promise<string> {
  const { tokens } = call.pipeline;
  let token = replay ? undefined : tokens.current();
  let rejected = replay ? call.token : undefined;
  for (let renewals = 0; token === undefined; renewals++) {
    const { permit } = call;
    // An upload's permit holds an upload slot too, which a login must not use: it goes back instead.
    const loan = permit && call.bucket === 'general' ? new SlotLoan(permit) : undefined;
    if (!loan) permit?.release();
    let renewed: string;
    try {
      renewed = await renewToken(call, rejected, loan);
    } catch (error) {
      if (loan?.reclaim()) permit?.release();
      throw error;
    }
    rejected = undefined;
    if (!loan?.reclaim()) call.permit = await takeSlot(call, true);
    token = tokens.current() ?? (renewals >= MAX_RENEWALS_PER_ATTEMPT ? renewed : undefined);
  }
  return token;
}

/**
 * A fresh token from the store or a renewal shared with every call that needs one, waited for no
 * longer than the call's deadline. Whatever failed there, this call's own request has not left; the
 * renewal's error is shared by every waiting call, so each gets its own copy to reclassify.
 */
async function renewToken(call: Call<z.ZodType>, rejected: string | undefined, loan: SlotLoan | undefined) {
  try {
    return await call.control.wait(
      call.pipeline.tokens.renewed(rejected, loan),
      'waiting for an access token',
    );
  } catch (error) {
    // Not the SDK's (a token store's own error): the caller's to judge, never retried.
    if (!isOAError(error)) throw error;
    // The credentials were refused: final for this call too (not a 401 of its own to replay).
    if (error.retryClass === 'unauthorized') throw reissued(error, { retryClass: 'final' });
    throw notSent(error, 'Not sent: the access token could not be obtained');
  }
}

/** A failure before the request left: an SDK error classed `not_sent` (retried, for sends too). */
function notSent(error: unknown, message: string): OAError {
  if (isOAError(error)) {
    const kind = error.retryClass;
    return kind === 'final' || kind === 'rejected' || kind === 'not_sent'
      ? error
      : reissued(error, { retryClass: 'not_sent' });
  }
  return new OAConnectionError(`${message}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
    failure: 'not_sent',
  });
}

/** The request, with the slot (`call.permit`) and token (`call.token`) the attempt holds: transport -> answer. */
async function exchange<R extends z.ZodType>(call: Call<R>): Promise<z.output<R>> {
  const { pipeline, endpoint, control, permit, attempt } = call;
  let body: AttemptBody | undefined;
  let res: TransportResponse;
  let sending = false;
  const started = performance.now();
  try {
    body = call.makeBody();
    const request = {
      url: pipeline.url(endpoint.path),
      headers: pipeline.headers.of(body.headers, call.token),
      body: body.body,
      timeoutMs: call.timeoutMs,
      isSend: endpoint.isSend,
    };
    const dispatcher = pipeline.transport.dispatcher();
    const ready = dispatcher instanceof Promise ? await dispatcher : dispatcher;
    if (call.beforeSend) await runBeforeSend(control, call.beforeSend, endpoint);
    pipeline.logger.debug?.(`oa-messaging: POST ${endpoint.path}`, { attempt });
    if (pipeline.events.has('request')) {
      pipeline.events.emit('request', {
        endpoint: endpoint.name,
        method: 'POST',
        path: endpoint.path,
        attempt,
      });
    }
    sending = true;
    res = await send(request, ready, control);
  } catch (error) {
    // A request that went to the transport counts in its window; one that never got there does not.
    if (sending) permit?.ended();
    else permit?.release();
    throw error;
  } finally {
    body?.dispose?.();
  }
  permit?.ended();
  const durationMs = Math.round(performance.now() - started);
  pipeline.logger.debug?.(`oa-messaging: POST ${endpoint.path} -> ${res.status}`, {
    status: res.status,
    ms: durationMs,
  });
  if (pipeline.events.has('response')) {
    const { status } = res;
    pipeline.events.emit('response', {
      endpoint: endpoint.name,
      method: 'POST',
      path: endpoint.path,
      attempt,
      status,
      durationMs,
    });
  }
  const data = readAnswer(call, res);
  if (call.onResponse) tellResponse(pipeline, call.onResponse, answerOf(res, attempt));
  return data;
}

/**
 * The caller's last word before the request leaves, bounded like every other wait of the call; if it
 * fails, the request does not leave.
 */
async function runBeforeSend(control: CallControl, hook: () => unknown, endpoint: { path: string }) {
  const doing = 'running its beforeSend hook';
  if (control.stopped) throw control.error(doing);
  let done: unknown;
  try {
    done = hook();
  } catch (error) {
    throw hookFailed(error, endpoint);
  }
  if (!(done instanceof Promise)) return;
  try {
    await control.wait(done, doing);
  } catch (error) {
    if (control.stopped) throw error;
    throw hookFailed(error, endpoint);
  }
}

/** A fresh not-sent error for a hook's failure: whatever the hook threw, nothing left. */
function hookFailed(error: unknown, endpoint: { path: string }): OAError {
  const reason = error instanceof Error ? error.message : String(error);
  return new OAConnectionError(`POST ${endpoint.path} not sent: its beforeSend hook failed: ${reason}`, {
    cause: error,
    failure: 'not_sent',
  });
}

/**
 * The answer's `data`, parsed by the endpoint's schema, or the error it stands for. Everything that
 * leaves in an error is scrubbed (secrets, credential fields, JWTs); a successful answer reaches the
 * caller and the token store intact (it may rightly hold a token the client already has).
 */
function readAnswer<R extends z.ZodType>(call: Call<R>, res: TransportResponse): z.output<R> {
  const { endpoint, pipeline } = call;
  const scrub = (text: string) => redactText(text, pipeline.secrets());
  if (res.status < 200 || res.status >= 300) {
    throw errorFromAnswer({
      status: res.status,
      headers: res.headers,
      text: scrub(res.text),
      path: endpoint.path,
      isSend: endpoint.isSend,
    });
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch (error) {
    // JSON.parse's message quotes the body: keep it as the cause, scrubbed like the body.
    const cut = res.truncated ? ` (cut at ${res.text.length} bytes)` : '';
    throw new OAResponseValidationError(
      `POST ${endpoint.path} answered ${res.status} with a body that is not JSON${cut}`,
      // Scrubbed whole, then cut: a cut first could leave the start of a secret that no longer matches.
      { status: res.status, path: endpoint.path, body: scrub(res.text).slice(0, 1000), issues: [] },
      { cause: new SyntaxError(scrub((error as Error).message)) },
    );
  }
  const data = (body as { data?: unknown } | null)?.data;
  const result = endpoint.response.safeParse(data);
  if (result.success) return result.data;
  const issues = toIssues(result.error).map((issue) => ({ ...issue, path: ['data', ...issue.path] }));
  throw new OAResponseValidationError(
    `POST ${endpoint.path} answered ${res.status} with an unexpected body: ${formatIssues(issues)}`,
    { status: res.status, path: endpoint.path, body: scrubbedJson(scrub(res.text)), issues },
  );
}

/** The parsed body (its text already scrubbed of secrets) with credential fields blanked. */
function scrubbedJson(clean: string): unknown {
  try {
    return redactJson(JSON.parse(clean));
  } catch {
    return clean;
  }
}

/** The caller's `onResponse`: one that throws must not turn a delivered send into a failure. */
function tellResponse(pipeline: Pipeline, onResponse: (info: OAResponseInfo) => void, info: OAResponseInfo) {
  try {
    onResponse(info);
  } catch (error) {
    pipeline.logger.warn?.(
      `oa-messaging: an onResponse callback threw (${error instanceof Error ? error.message : String(error)}); the call succeeded`,
    );
  }
}

/** What a caller's `onResponse` learns of the answer that settled its call. */
function answerOf(res: TransportResponse, attempt: number): OAResponseInfo {
  const id = res.headers['x-request-id'];
  return { status: res.status, headers: res.headers, requestId: Array.isArray(id) ? id[0] : id, attempt };
}

/**
 * Endpoint 1 or 2 for the token manager: one exchange, straight to the transport, in the slot lent by
 * the call that started the renewal, else in one of its own ahead of the rate limiter's queue. Not
 * bounded by any one caller (every call waiting for the token shares it): each caller stops waiting at
 * its own deadline; the request itself has the client's per-attempt limit. A control of its own, so
 * that close() ends it too.
 */
async function tokenExchange<R extends z.ZodType>(
  pipeline: Pipeline,
  endpoint: Endpoint<z.ZodType, R>,
  params: unknown,
  slot: Permit | undefined,
): Promise<z.output<R>> {
  const call = new Call(
    pipeline,
    endpoint,
    {},
    { body: JSON.stringify(params), headers: pipeline.headers.json },
  );
  call.attempt = 1;
  try {
    call.permit = slot ?? (await takeSlot(call, true));
    return await exchange(call);
  } finally {
    call.control.end();
  }
}

/**
 * The headers each request carries: built once per client (and once per token for the bearer), so
 * that the hot path spreads no object per call.
 */
class RequestHeaders {
  /** The headers of a JSON request without a token (a login or refresh). */
  readonly json: Readonly<Record<string, string>>;
  readonly #common: Readonly<Record<string, string>>;
  #bearer: { token: string; headers: Record<string, string> } | undefined;

  constructor(app: AppInfo | undefined, defaults: Record<string, string> | undefined) {
    this.#common = { ...defaults, accept: 'application/json', 'user-agent': userAgent(app) };
    this.json = { ...this.#common, 'content-type': 'application/json' };
  }

  /** An attempt's headers: its content headers (the JSON ones, or an upload's) and the token. */
  of(content: Readonly<Record<string, string>>, token: string | undefined): Record<string, string> {
    if (content !== this.json) {
      return {
        ...this.#common,
        ...content,
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      };
    }
    if (token === undefined) return content;
    // Built once per token rather than spread on every call.
    if (this.#bearer?.token !== token) {
      this.#bearer = { token, headers: { ...this.json, authorization: `Bearer ${token}` } };
    }
    return this.#bearer.headers;
  }
}
