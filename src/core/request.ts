/**
 * The one way a call flows, in the order the server sees it:
 *
 *   check params and options (before any I/O)
 *   -> retry loop (one budget, one deadline)
 *      -> per attempt: rate-limit slot -> access token -> transport -> map the answer -> parse
 *
 * None of the steps knows which endpoint it serves. A login or refresh is one exchange (slot ->
 * transport -> answer) run by the token step: no retry loop inside a retry loop.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { isOAError, OAConnectionError, type OAError } from '../errors.js';
import { RequestOptionsSchema, UploadOptionsSchema } from '../schemas/requests.js';
import type { PreparedUpload, UploadProgress } from '../uploads/types.js';
import { readAnswer } from './answer.js';
import type { TokenManager } from './auth.js';
import type { CallControl, CallRegistry } from './call-control.js';
import type { DispatcherLike } from './dispatcher.js';
import { bucketOf, type Endpoint } from './endpoint.js';
import type { ClientEvents } from './events.js';
import { classifyAs, failureKind } from './failure.js';
import type { RequestHeaders } from './headers.js';
import type { Logger } from './logger.js';
import type { Limiter, Permit, RateLimitBucket } from './rate-limit.js';
import { beforeSendOf, notDeliveredOf, type OAResponseInfo, type RequestOptions } from './request-options.js';
import { type Retry, withRetries } from './retry.js';
import { runBeforeSend, tellNotDelivered } from './send-hooks.js';
import { SlotLoan } from './slot-loan.js';
import { dispatcherOf, send, type TransportResponse, type Undici } from './transport.js';
import { validate } from './validate.js';

export type { Endpoint } from './endpoint.js';
export type { RequestOptions } from './request-options.js';

/** What every call needs from the client. */
export interface RequestContext {
  baseUrl: URL;
  dispatcher: (loaded: Undici) => DispatcherLike;
  /** The client's request headers (User-Agent, default headers, the bearer per token). */
  headers: RequestHeaders;
  /** Per-attempt limit. */
  timeoutMs: number;
  /** The per-attempt limit of uploads. */
  uploadTimeoutMs: number;
  maxRetries: number;
  maxBusyWaitMs: number;
  /** `undefined` when `rateLimit: false`. */
  limiter: Limiter | undefined;
  events: ClientEvents;
  logger: Logger;
  tokens: TokenManager;
  calls: CallRegistry;
  /** Credentials to scrub from anything that leaves the SDK (messages, logs, error bodies). */
  secrets: () => Iterable<string | undefined>;
}

/** What one attempt sends: the same JSON text each time, or a fresh multipart stream. */
interface AttemptBody {
  body: string | Readable;
  /** Content headers: `content-type`, and `content-length` when known. */
  headers: Record<string, string>;
  dispose(): void;
}

/** Each endpoint's URL, made once per client: nothing reads or changes it after. */
const urls = new WeakMap<URL, Map<string, URL>>();

function urlFor(base: URL, path: string): URL {
  let known = urls.get(base);
  if (!known) {
    known = new Map();
    urls.set(base, known);
  }
  let url = known.get(path);
  if (!url) {
    url = new URL(base);
    url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
    known.set(path, url);
  }
  return url;
}

/**
 * Checks the per-call options (and that the client is open) before anything else happens: a mistake
 * there must not cost a login. Returns them as given.
 */
export function checkRequestOptions<O extends RequestOptions>(
  ctx: RequestContext,
  endpoint: { name: string; path: string },
  options: O | undefined,
  schema: z.ZodType = RequestOptionsSchema,
): O {
  if (options !== undefined) validate(schema, options, `${endpoint.name} options`);
  if (ctx.calls.closed) {
    throw new OAConnectionError(`POST ${endpoint.path} not sent: the client is closed`, { failure: 'final' });
  }
  return options ?? ({} as O);
}

const always = () => true;

/** A JSON call: params and options checked, then the pipeline. */
export function callEndpoint<P extends z.ZodType, R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<P, R>,
  params: unknown,
  options?: RequestOptions,
): Promise<z.output<R>> {
  try {
    const checked = checkRequestOptions(ctx, endpoint, options);
    const text = JSON.stringify(validate(endpoint.params, params, `${endpoint.name} params`));
    const body: AttemptBody = { body: text, headers: ctx.headers.json, dispose() {} };
    return run(ctx, endpoint, checked, always, () => body);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** An upload: the same pipeline with a multipart body made afresh for each attempt. */
export function callUpload<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  upload: PreparedUpload,
  options: RequestOptions & { onProgress?: ((progress: UploadProgress) => void) | undefined },
): Promise<z.output<R>> {
  let read = false;
  const replayable = () => upload.replayable || !read;
  return run(ctx, endpoint, options, replayable, () => {
    read = true;
    const made = upload.body(options.onProgress);
    return { body: made.body as unknown as Readable, headers: made.headers, dispose: () => made.dispose() };
  });
}

/** The upload options' schema, for the upload methods' own check. */
export { UploadOptionsSchema };

async function run<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  options: RequestOptions,
  replayable: () => boolean,
  makeBody: () => AttemptBody,
): Promise<z.output<R>> {
  const what = `POST ${endpoint.path}`;
  const control = ctx.calls.start(what, options, beforeSendOf(options));
  control.onResponse = options.onResponse;
  control.notDelivered = notDeliveredOf(options);
  try {
    return await withRetries(
      (attempt, previous) => attemptOnce(ctx, endpoint, control, makeBody, attempt, previous),
      {
        maxRetries: options.maxRetries ?? ctx.maxRetries,
        maxBusyWaitMs: ctx.maxBusyWaitMs,
        isSend: endpoint.isSend,
        usesToken: endpoint.auth,
        replayable,
      },
      control,
      (retry) => reportRetry(ctx, endpoint, retry),
    );
  } finally {
    control.end();
  }
}

/** A token that is stale again by the time its call gets a slot is renewed at most this often. */
const MAX_RENEWALS_PER_ATTEMPT = 2;

/** The token each attempt used, so that a 401 renews from that one. */
const usedTokens = new WeakMap<CallControl, string>();

/** One attempt: slot -> token -> transport -> answer. */
async function attemptOnce<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  control: CallControl,
  makeBody: () => AttemptBody,
  attempt: number,
  previous: Retry | undefined,
): Promise<z.output<R>> {
  const bucket = bucketOf(endpoint.path);
  // A replay after a 401 goes ahead of the queue: it already waited its turn once.
  const replay = previous?.reason === 'unauthorized';
  let permit = await takeSlot(ctx, endpoint, bucket, control, replay);
  let token: string | undefined;
  if (endpoint.auth) {
    token = replay ? undefined : ctx.tokens.current();
    let rejected = replay ? usedTokens.get(control) : undefined;
    // No fresh token: wait for the one renewal, lending it this call's slot if this call starts it
    // (the lender then queues again, ahead of the rest). A call that holds its slot too long for the
    // new token to stay fresh renews again: the token must be fresh when the request leaves.
    for (let renewals = 0; token === undefined; renewals++) {
      // An upload's permit holds an upload slot too, which a login must not use: it goes back instead.
      const loan = permit && bucket === 'general' ? new SlotLoan(permit) : undefined;
      if (!loan) permit?.release();
      let renewed: string;
      try {
        renewed = await renewToken(ctx, control, rejected, loan);
      } catch (error) {
        if (loan?.reclaim()) permit?.release();
        throw error;
      }
      rejected = undefined;
      if (!loan?.reclaim()) permit = await takeSlot(ctx, endpoint, bucket, control, true);
      token = ctx.tokens.current() ?? (renewals >= MAX_RENEWALS_PER_ATTEMPT ? renewed : undefined);
    }
    usedTokens.set(control, token);
  }
  return exchange(ctx, endpoint, makeBody, token, permit, control, attempt);
}

/**
 * Slot -> transport -> answer with a slot already held (`permit`): one request. A login or refresh
 * runs this alone, with no call of its own around it.
 */
export async function exchange<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  makeBody: () => AttemptBody,
  token: string | undefined,
  permit: Permit | undefined,
  control: CallControl | undefined,
  attempt: number,
): Promise<z.output<R>> {
  let body: AttemptBody | undefined;
  let res: TransportResponse;
  let sending = false;
  // The beforeSend hook ran: this attempt may have recorded that its request left.
  let recorded = false;
  const started = performance.now();
  try {
    body = makeBody();
    const headers =
      body.headers === ctx.headers.json
        ? token === undefined
          ? body.headers
          : ctx.headers.withToken(token)
        : ctx.headers.forUpload(body.headers, token);
    const url = urlFor(ctx.baseUrl, endpoint.path);
    const request = {
      url,
      headers,
      body: body.body,
      dispatcher: ctx.dispatcher,
      timeoutMs: bucketOf(endpoint.path) === 'upload' ? ctx.uploadTimeoutMs : ctx.timeoutMs,
      isSend: endpoint.isSend,
      onStart: () => {
        sending = true;
      },
    };
    const dispatcher = dispatcherOf(request);
    const ready = dispatcher instanceof Promise ? await dispatcher : dispatcher;
    if (control?.beforeSend) {
      recorded = true;
      await runBeforeSend(control, control.beforeSend, endpoint);
    }
    ctx.logger.debug?.(`oa-messaging: POST ${endpoint.path}`, { attempt });
    if (ctx.events.has('request')) {
      ctx.events.emit('request', { endpoint: endpoint.name, method: 'POST', path: endpoint.path, attempt });
    }
    res = await send(request, ready, control);
  } catch (error) {
    // A request undici began to write counts in its window; one refused before that (by the
    // dispatcher, a closed dispatcher, a refused connection) never reached the API: its slot goes back.
    if (sending) permit?.ended();
    else permit?.release();
    if (recorded) await tellNotDelivered(ctx.logger, control, error);
    throw error;
  } finally {
    body?.dispose();
  }
  permit?.ended();
  const durationMs = Math.round(performance.now() - started);
  ctx.logger.debug?.(`oa-messaging: POST ${endpoint.path} -> ${res.status}`, {
    status: res.status,
    ms: durationMs,
  });
  if (ctx.events.has('response')) {
    ctx.events.emit('response', {
      endpoint: endpoint.name,
      method: 'POST',
      path: endpoint.path,
      attempt,
      status: res.status,
      durationMs,
    });
  }
  let data: z.output<R>;
  try {
    data = readAnswer(endpoint, res, ctx.secrets());
  } catch (error) {
    if (recorded) await tellNotDelivered(ctx.logger, control, error);
    throw error;
  }
  if (control?.onResponse) tellResponse(ctx, control.onResponse, answerOf(res, attempt));
  return data;
}

/** The caller's `onResponse`: one that throws must not turn a delivered send into a failure. */
function tellResponse(ctx: RequestContext, onResponse: (info: OAResponseInfo) => void, info: OAResponseInfo) {
  try {
    onResponse(info);
  } catch (error) {
    ctx.logger.warn?.(
      `oa-messaging: an onResponse callback threw (${error instanceof Error ? error.message : String(error)}); the call succeeded`,
    );
  }
}

/** What a caller's `onResponse` learns of the answer that settled its call. */
function answerOf(res: TransportResponse, attempt: number): OAResponseInfo {
  const id = res.headers['x-request-id'];
  return {
    status: res.status,
    headers: res.headers,
    requestId: Array.isArray(id) ? id[0] : id,
    attempt,
  };
}

/**
 * A slot in the client's rate limiter: at once when one is free, else after a wait that the call's
 * deadline, signal and `close()` can end (the slot, granted later, then goes straight back).
 */
async function takeSlot(
  ctx: RequestContext,
  endpoint: { name: string; path: string },
  bucket: RateLimitBucket,
  control: CallControl | undefined,
  first: boolean,
): Promise<Permit | undefined> {
  const { limiter } = ctx;
  if (!limiter) return undefined;
  let granted: Permit | Promise<Permit>;
  try {
    // A call that can be stopped (a deadline, a signal) leaves the queue when it is, so that its
    // place neither holds up the rest nor keeps the process alive; close() stops the limiter itself.
    granted = limiter.acquire(bucket, { first, signal: control?.stoppable ? control.signal : undefined });
  } catch (error) {
    throw notSent(error, `POST ${endpoint.path} not sent: the rate limiter failed`);
  }
  if (!(granted instanceof Promise)) return granted;
  let permit: Permit;
  try {
    permit = control ? await control.wait(granted, `waiting for the ${bucket} rate limit`) : await granted;
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
    ctx.logger.debug?.(
      `oa-messaging: POST ${endpoint.path} waited ${waitedMs} ms for the ${bucket} rate limit`,
    );
    ctx.events.emit('rateLimitWait', { endpoint: endpoint.name, path: endpoint.path, bucket, waitedMs });
  }
  return permit;
}

/**
 * A fresh token for a call, from the store or a renewal shared with every call that needs one. The
 * call waits for it no longer than its deadline; whatever failed there, the call's own request has
 * not left.
 */
async function renewToken(
  ctx: RequestContext,
  control: CallControl,
  rejected: string | undefined,
  loan: SlotLoan | undefined,
) {
  try {
    return await control.wait(ctx.tokens.renewed(rejected, loan), 'waiting for an access token');
  } catch (error) {
    const kind = failureKind(error);
    // The credentials were refused: final for this call too (not a 401 of its own to replay).
    if (kind === 'unauthorized') throw classifyAs(error as object, 'final');
    if (kind === 'final' || kind === 'rejected') throw error;
    throw notSent(error, 'Not sent: the access token could not be obtained');
  }
}

/** A failure before the request left: an SDK error classed `not_sent` (retried, for sends too). */
function notSent(error: unknown, message: string): OAError {
  if (isOAError(error)) {
    const kind = failureKind(error);
    return kind === 'final' || kind === 'rejected' ? error : classifyAs(error, 'not_sent');
  }
  return new OAConnectionError(`${message}: ${error instanceof Error ? error.message : String(error)}`, {
    cause: error,
    failure: 'not_sent',
  });
}

function reportRetry(ctx: RequestContext, endpoint: Endpoint<z.ZodType, z.ZodType>, retry: Retry): void {
  ctx.logger.warn?.(
    `oa-messaging: POST ${endpoint.path} failed (${retry.error.message}); retrying in ${retry.waitMs} ms`,
    { attempt: retry.attempt, reason: retry.reason, waitMs: retry.waitMs },
  );
  ctx.events.emit('retry', { endpoint: endpoint.name, path: endpoint.path, ...retry });
}

/**
 * Endpoint 1 or 2 for the token manager: one exchange, straight to the transport, in the slot lent by
 * the call that started the renewal, else in one of its own ahead of the rate limiter's queue. Not bounded by any one caller (every call waiting for the token shares it): each
 * caller stops waiting at its own deadline; the request itself has the client's per-attempt limit.
 */
export async function tokenExchange<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  params: unknown,
  slot: Permit | undefined,
): Promise<z.output<R>> {
  const body: AttemptBody = { body: JSON.stringify(params), headers: ctx.headers.json, dispose() {} };
  // A control of its own, so that close() ends it too; no deadline: its callers have theirs.
  const control = ctx.calls.start(`POST ${endpoint.path}`, {});
  try {
    const permit = slot ?? (await takeSlot(ctx, endpoint, 'general', control, true));
    return await exchange(ctx, endpoint, () => body, undefined, permit, control, 1);
  } finally {
    control.end();
  }
}
