import type * as z from 'zod/mini';
import type { Endpoint } from '../endpoints.js';
import {
  errorFromAnswer,
  isOAError,
  OAConnectionError,
  type OAError,
  OAResponseValidationError,
  reissued,
} from '../errors.js';
import { formatIssues, invalid, zodIssues } from '../schemas/validate.js';
import type { PreparedUpload, UploadOptions } from '../uploads/types.js';
import { type CallControl, sleep } from './call-control.js';
import { runAround, runBeforeSend, tellNotDelivered } from './hooks.js';
import { answerOf, checkOptions, type RequestHeaders, type RequestOptions, tellResponse } from './options.js';
import { type Permit, SlotLoan } from './rate-limit.js';
import { redactJsonText, redactText } from './redact.js';
import { type AttemptBody, Call, type PipelineContext, withRetries } from './retry.js';
import type { TransportResponse } from './transport.js';

/**
 * A JSON call: its options (when it has any), whether the client is open, its params, then the retry
 * loop. A mistake in the options must not cost a login; a closed client is refused before its params
 * are read.
 */
export function call<R extends z.ZodMiniType>(
  ctx: PipelineContext,
  endpoint: Endpoint<z.ZodMiniType, R>,
  params: unknown,
  options?: RequestOptions,
): Promise<z.output<R>> {
  try {
    if (options === undefined) ctx.calls.refuseIfClosed(`POST ${endpoint.path}`);
    else checkOptions(ctx, endpoint, options);
    const valid = endpoint.params.safeParse(params);
    if (!valid.success) throw invalid(endpoint.params, params, `${endpoint.name} params`);
    return runJson(ctx, endpoint, valid.data, options ?? {});
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * A JSON call whose params and options its caller has already checked (a broadcast or `sendVideo`,
 * which read them before they wait): every param is checked once. Only whether the client is still
 * open is asked again. `around: false` for a try of a call whose `aroundCall` hooks already run around
 * it (each try of `sendVideo` while its ticket converts).
 */
export function callChecked<R extends z.ZodMiniType>(
  ctx: PipelineContext,
  endpoint: Endpoint<z.ZodMiniType, R>,
  valid: unknown,
  options: RequestOptions,
  around = true,
): Promise<z.output<R>> {
  try {
    ctx.calls.refuseIfClosed(`POST ${endpoint.path}`);
    return runJson(ctx, endpoint, valid, options, around);
  } catch (error) {
    return Promise.reject(error);
  }
}

function runJson<R extends z.ZodMiniType>(
  ctx: PipelineContext,
  endpoint: Endpoint<z.ZodMiniType, R>,
  valid: unknown,
  options: RequestOptions,
  around = true,
): Promise<z.output<R>> {
  const body = { body: JSON.stringify(valid), headers: ctx.headers.json };
  return run(new Call(ctx, endpoint, options, body, undefined, valid), around);
}

/**
 * An upload, its file read and checked: the retry loop with a fresh multipart body each attempt. The
 * call's control was started before the file was read, so that the read counts in the call.
 */
export function callUpload<R extends z.ZodMiniType>(
  ctx: PipelineContext,
  endpoint: Endpoint<z.ZodMiniType, R>,
  upload: PreparedUpload,
  options: UploadOptions,
  control: CallControl,
): Promise<z.output<R>> {
  return run(new Call(ctx, endpoint, options, upload, control));
}

/**
 * The call: its retry loop inside its `aroundCall` hooks (the client's tracing first), its control
 * ended however it ends, also when a hook never calls `next()`.
 */
function run<R extends z.ZodMiniType>(call: Call<R>, around = true): Promise<z.output<R>> {
  return inside(call, around, () => retried(call));
}

/** `fn` inside the call's `aroundCall` hooks (unless `around` is false), ending its control after. */
function inside<T>(call: Call<z.ZodMiniType>, around: boolean, fn: () => Promise<T>): Promise<T> {
  const hooks = around ? call.hooks?.aroundCall : undefined;
  if (!hooks) return fn();
  return runAround(hooks, call.state, call.ctx.logger, fn).finally(() => call.control.end());
}

async function retried<R extends z.ZodMiniType>(call: Call<R>): Promise<z.output<R>> {
  try {
    const { prepare } = call.ctx;
    if (prepare) await call.control.wait(prepare(), "reading the account's credentials");
    return await withRetries(call, attemptOnce);
  } finally {
    call.control.end();
  }
}

/** A token that is stale again by the time its call gets a slot is renewed at most this often. */
const MAX_RENEWALS_PER_ATTEMPT = 2;

/** One attempt: slot -> token -> exchange. */
async function attemptOnce<R extends z.ZodMiniType>(call: Call<R>): Promise<z.output<R>> {
  // A replay after a 401 goes ahead of the queue: it already waited its turn once.
  const replay = call.previous?.reason === 'unauthorized';
  call.permit = await takeSlot(call, replay);
  if (call.usesToken) {
    // A fresh token (the usual case) is taken as it is: no renewal step, no extra await.
    const current = replay ? undefined : call.ctx.tokens.current();
    call.token = current ?? (await tokenFor(call, replay));
  }
  return exchange(call);
}

/**
 * A slot in the client's rate limiter: at once when one is free, else after a wait that the call's
 * deadline, signal and `close()` can end (the slot, granted later, then goes straight back).
 */
async function takeSlot(call: Call<z.ZodMiniType>, first: boolean): Promise<Permit | undefined> {
  const { limiter } = call.ctx;
  if (!limiter) return undefined;
  const { control, endpoint, bucket } = call;
  let granted: Permit | Promise<Permit>;
  try {
    // A call that can be stopped (a deadline, a signal) leaves the queue when it is, so that its
    // place neither holds up the rest nor keeps the process alive; close() stops the limiter itself.
    granted = limiter.acquire(bucket, {
      first,
      bulk: call.bulk,
      reserve: call.replyReserve,
      signal: control.stoppable ? control.signal : undefined,
    });
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
    call.ctx.logger.debug?.(
      `oa-messaging: POST ${endpoint.path} waited ${waitedMs} ms for the ${bucket} rate limit`,
    );
    call.ctx.events.emit('rateLimitWait', {
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
async function tokenFor(call: Call<z.ZodMiniType>, replay: boolean): Promise<string> {
  const { tokens } = call.ctx;
  let token = replay ? undefined : tokens.current();
  let rejected = replay ? call.token : undefined;
  for (let renewals = 0; token === undefined; renewals++) {
    const { permit } = call;
    // An upload's permit holds an upload slot too, which a login should not use: alone, it goes back
    // instead (the login, queued first, takes the general slot freed). A renewal shared with other
    // processes borrows it all the same: their calls waiting for this renewal (it holds the fleet's
    // renewal lock) may hold every general slot, and a login queued behind them would wait for ever.
    const loan =
      permit && (call.bucket === 'general' || call.ctx.tokens.shared) ? new SlotLoan(permit) : undefined;
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
async function renewToken(
  call: Call<z.ZodMiniType>,
  rejected: string | undefined,
  loan: SlotLoan | undefined,
) {
  try {
    // Renewed by this call's client: several clients may share the OA's token, each with its credentials.
    const renewal = call.ctx.tokens.renewed(call.ctx, rejected, loan);
    return await call.control.wait(renewal, 'waiting for an access token');
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
async function exchange<R extends z.ZodMiniType>(call: Call<R>): Promise<z.output<R>> {
  const { ctx, endpoint, control, permit, attempt } = call;
  let body: AttemptBody | undefined;
  let res: TransportResponse;
  let sending = false;
  // The attempt reached its beforeSend hooks: a hook may have recorded that its request left.
  let leaving = false;
  const started = performance.now();
  try {
    // JSON is ready at once; an upload's multipart body may first load what builds it, or read a
    // caller's stream (into memory, for fetch): bounded like every wait of the call. The stream is
    // released when the call settles (the upload's discard).
    const made = call.makeBody();
    body = made instanceof Promise ? await control.wait(made, 'reading the file') : made;
    const request = {
      url: urlOf(ctx, endpoint.path),
      headers: headersOf(ctx.headers, body.headers, call.token),
      body: body.body,
      timeoutMs: call.timeoutMs,
      isSend: endpoint.isSend,
      onStart: () => {
        sending = true;
      },
      onSent: body.sent,
    };
    leaving = true;
    if (call.hooks?.beforeSend) await runBeforeSend(call);
    ctx.logger.debug?.(`oa-messaging: POST ${endpoint.path}`, { attempt });
    if (ctx.events.heard.has('request')) {
      ctx.events.emit('request', {
        endpoint: endpoint.name,
        method: 'POST',
        path: endpoint.path,
        attempt,
      });
    }
    res = await ctx.transport.send(request, control);
  } catch (error) {
    // A request the transport began to send counts in its window; one refused before that (by the
    // dispatcher, a closed dispatcher, a refused connection) never reached the API: its slot goes back.
    if (sending) permit?.ended();
    else permit?.release();
    if (leaving && call.hooks?.notDelivered) await tellNotDelivered(call, error);
    throw error;
  } finally {
    body?.dispose?.();
  }
  permit?.ended();
  const durationMs = Math.round(performance.now() - started);
  ctx.logger.debug?.(`oa-messaging: POST ${endpoint.path} -> ${res.status}`, {
    status: res.status,
    ms: durationMs,
  });
  if (ctx.events.heard.has('response')) {
    const { status } = res;
    const id = res.headers['x-request-id'];
    ctx.events.emit('response', {
      endpoint: endpoint.name,
      method: 'POST',
      path: endpoint.path,
      attempt,
      status,
      durationMs,
      requestId: Array.isArray(id) ? id[0] : id,
    });
  }
  let data: z.output<R>;
  try {
    data = readAnswer(call, res);
  } catch (error) {
    if (leaving && call.hooks?.notDelivered) await tellNotDelivered(call, error);
    throw error;
  }
  if (call.onResponse) tellResponse(ctx, call.onResponse, answerOf(res, attempt));
  return data;
}

/**
 * The answer's `data`, parsed by the endpoint's schema, or the error it stands for. Everything that
 * leaves in an error is scrubbed (secrets, credential fields, JWTs); a successful answer reaches the
 * caller and the token store intact (it may rightly hold a token the client already has).
 */
function readAnswer<R extends z.ZodMiniType>(call: Call<R>, res: TransportResponse): z.output<R> {
  const { endpoint, ctx } = call;
  const scrub = (text: string) => redactText(text, ctx.secrets());
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
      // A 2xx is the API's "done": a send most likely went out, though its answer cannot be read.
      { cause: new SyntaxError(scrub((error as Error).message)), deliveryUnknown: endpoint.isSend },
    );
  }
  const data = (body as { data?: unknown } | null)?.data;
  const result = endpoint.response.safeParse(data);
  if (result.success) return result.data;
  const issues = zodIssues(endpoint.response, data).map((issue) => ({
    ...issue,
    path: ['data', ...issue.path],
  }));
  throw new OAResponseValidationError(
    `POST ${endpoint.path} answered ${res.status} with an unexpected body: ${formatIssues(issues)}`,
    { status: res.status, path: endpoint.path, body: redactJsonText(scrub(res.text)), issues },
    { deliveryUnknown: endpoint.isSend },
  );
}

/**
 * Endpoint 1 or 2 for the token manager: one exchange, straight to the transport, in the slot lent by
 * the call that started the renewal, else in one of its own ahead of the rate limiter's queue. Not
 * bounded by any one caller (every call waiting for the token shares it): each caller stops waiting at
 * its own deadline; the request itself has the client's per-attempt limit. A control of its own, so
 * that close() ends it too.
 */
export function tokenExchange<R extends z.ZodMiniType>(
  ctx: PipelineContext,
  endpoint: Endpoint<z.ZodMiniType, R>,
  params: unknown,
  slot: Permit | undefined,
): Promise<z.output<R>> {
  const body = { body: JSON.stringify(params), headers: ctx.headers.json };
  const call = new Call(ctx, endpoint, {}, body, undefined, undefined, true);
  call.attempt = 1;
  return inside(call, true, () => renewalExchange(call, slot)).catch((error: unknown) => {
    // A hook that failed before next(): the lent slot goes back.
    if (!call.permit) slot?.release();
    throw error;
  });
}

async function renewalExchange<R extends z.ZodMiniType>(
  call: Call<R>,
  slot: Permit | undefined,
): Promise<z.output<R>> {
  try {
    call.permit = slot ?? (await takeSlot(call, true));
    const pair = await exchange(call);
    // The calls waiting for this token would otherwise be dispatched before the pool takes back the
    // socket of the answer just read (a fresh connection is reusable only on a later turn of the event
    // loop): each would open a socket of its own, and a client's first call would hold two.
    await sleep(0, undefined, 'the token answer').done;
    return pair;
  } finally {
    call.control.end();
  }
}

/** An attempt's headers: its content headers (the JSON ones, or an upload's) and the token. */
function headersOf(
  headers: RequestHeaders,
  content: Readonly<Record<string, string>>,
  token: string | undefined,
): Readonly<Record<string, string>> {
  if (content !== headers.json) {
    return {
      ...headers.common,
      ...content,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    };
  }
  if (token === undefined) return content;
  // Built once per token rather than spread on every call.
  if (headers.bearer?.token !== token) {
    headers.bearer = { token, headers: { ...headers.json, authorization: `Bearer ${token}` } };
  }
  return headers.bearer.headers;
}

/** The URL of an endpoint, made once per client. */
function urlOf(ctx: PipelineContext, path: string): URL {
  let url = ctx.urls.get(path);
  if (!url) {
    url = new URL(ctx.baseUrl);
    url.pathname = `${ctx.baseUrl.pathname.replace(/\/+$/, '')}${path}`;
    ctx.urls.set(path, url);
  }
  return url;
}
