import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  errorFromAnswer,
  OAConnectionError,
  OAResponseValidationError,
  OATimeoutError,
  OAUnauthorizedError,
  OAValidationError,
} from '../errors.js';
import type { PreparedUpload, UploadProgress } from '../uploads/types.js';
import { VERSION } from '../version.js';
import type { TokenManager } from './auth.js';
import type { ClientEvents } from './events.js';
import type { Logger } from './logger.js';
import type { Limiter, Permit, RateLimitBucket } from './rate-limit.js';
import { redactJson, redactText } from './redact.js';
import { explainNotReplayable, markFinal, withRetries } from './retry.js';
import { send, type TransportResponse, type Undici } from './transport.js';
import { formatIssues, toIssues, validate } from './validate.js';

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /**
   * Cancels the call wherever it is waiting (the rate limiter's queue, a backoff, the transcode wait,
   * the request itself); the call rejects with `OAAbortError`.
   */
  signal?: AbortSignal;
  /**
   * Per-attempt limit in ms, overriding the client's `timeoutMs` (or `uploadTimeoutMs`). Given here, it
   * also bounds each wait: the time queued in the rate limiter (then `OATimeoutError`, not sent) and a
   * retry's backoff (a longer one is not started).
   */
  timeoutMs?: number;
}

/** An endpoint, declared: what it is called, what it takes, what it answers, and how it may be repeated. */
export interface Endpoint<P extends z.ZodType, R extends z.ZodType> {
  path: string;
  params: P;
  response: R;
  /** Sends `Authorization: Bearer`; endpoints 1 and 2 do not. */
  auth: boolean;
  /** A send or broadcast: at most once (see "Retries" in API.md). */
  isSend: boolean;
  /** Named in validation messages, e.g. `sendText params`. */
  name: string;
}

/** What every call needs from the client. */
export interface RequestContext {
  baseUrl: URL;
  dispatcher: (loaded: Undici) => Dispatcher;
  timeoutMs: number;
  /** The per-attempt default for uploads. */
  uploadTimeoutMs: number;
  maxRetries: number;
  maxBusyWaitMs: number;
  /** `undefined` when `rateLimit: false`. */
  limiter: Limiter | undefined;
  events: ClientEvents;
  logger: Logger;
  tokens: TokenManager;
  /** Credentials to scrub from anything that leaves the SDK (messages, logs, error bodies). */
  secrets: () => Iterable<string | undefined>;
  isClosed: () => boolean;
}

/** What one attempt sends: the same JSON text each time, or a fresh multipart stream. */
interface AttemptBody {
  body: string | Readable;
  headers: Record<string, string>;
  dispose(): void;
}

const USER_AGENT = `oa-messaging/${VERSION} node/${process.version}`;

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

/** Maps an answer to the endpoint's typed `data`, or throws the error it stands for. */
function readAnswer<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  res: TransportResponse,
): z.output<R> {
  // Only what leaves in an error is scrubbed: a successful token answer may rightly hold a token the
  // client already has (a refresh token that does not rotate) and must reach the token store intact.
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
    throw new OAResponseValidationError(
      `POST ${endpoint.path} answered ${res.status} with a body that is not JSON`,
      { status: res.status, path: endpoint.path, body: scrub(res.text.slice(0, 1000)), issues: [] },
      { cause: new SyntaxError(scrub((error as Error).message)) },
    );
  }
  const data = (body as { data?: unknown } | null)?.data;
  const result = endpoint.response.safeParse(data);
  if (result.success) return result.data;
  const issues = toIssues(result.error).map((issue) => ({ ...issue, path: ['data', ...issue.path] }));
  throw new OAResponseValidationError(
    `POST ${endpoint.path} answered ${res.status} with an unexpected body: ${formatIssues(issues)}`,
    { status: res.status, path: endpoint.path, body: redactJson(body), issues },
  );
}

function checkCall(ctx: RequestContext, endpoint: Endpoint<z.ZodType, z.ZodType>, options: RequestOptions) {
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    throw new OAValidationError(`Invalid ${endpoint.name} options: timeoutMs must be a positive number`, [
      { path: ['timeoutMs'], message: 'Must be a positive number' },
    ]);
  }
  if (ctx.isClosed()) throw new OAConnectionError(`POST ${endpoint.path} not sent: the client is closed`);
}

/**
 * The one way a JSON call flows: validate -> retry policy -> auth (token, one 401 refresh) -> rate
 * limiter -> transport -> map the answer -> parse the response. None of the steps knows which
 * endpoint it serves.
 */
export async function callEndpoint<P extends z.ZodType, R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<P, R>,
  params: unknown,
  options: RequestOptions = {},
): Promise<z.output<R>> {
  const text = JSON.stringify(validate(endpoint.params, params, `${endpoint.name} params`));
  checkCall(ctx, endpoint, options);
  const headers = { 'content-type': 'application/json' };
  return run(ctx, endpoint, options, true, () => ({ body: text, headers, dispose() {} }));
}

/** An upload: the same flow with a multipart body made afresh for each attempt. */
export async function callUpload<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  upload: PreparedUpload,
  options: RequestOptions & { onProgress?: ((progress: UploadProgress) => void) | undefined },
): Promise<z.output<R>> {
  checkCall(ctx, endpoint, options);
  return run(ctx, endpoint, options, upload.replayable, () => upload.body(options.onProgress));
}

async function run<R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<z.ZodType, R>,
  options: RequestOptions,
  replayable: boolean,
  makeBody: () => AttemptBody,
): Promise<z.output<R>> {
  const what = `POST ${endpoint.path}`;
  const url = urlFor(ctx.baseUrl, endpoint.path);
  const bucket = endpoint.path.includes('/upload/') ? 'upload' : 'general';
  const timeoutMs = options.timeoutMs ?? (bucket === 'upload' ? ctx.uploadTimeoutMs : ctx.timeoutMs);
  const { events, logger } = ctx;
  const { signal } = options;

  const attemptOnce = async (token: string | undefined, attempt: number): Promise<z.output<R>> => {
    const permit = ctx.limiter && (await acquireSlot(ctx.limiter, what, bucket, !endpoint.auth, options));
    if (permit && permit.waitedMs > 0) {
      const waitedMs = Math.round(permit.waitedMs);
      logger.debug?.(`oa-messaging: ${what} waited ${waitedMs} ms for the ${bucket} rate limit`);
      events.emit('rateLimitWait', { endpoint: endpoint.name, path: endpoint.path, bucket, waitedMs });
    }
    let body: AttemptBody;
    try {
      body = makeBody();
    } catch (error) {
      permit?.release();
      throw error;
    }
    const headers: Record<string, string> = {
      ...body.headers,
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const started = performance.now();
    logger.debug?.(`oa-messaging: ${what}`, { attempt });
    if (events.has('request')) {
      events.emit('request', { endpoint: endpoint.name, method: 'POST', path: endpoint.path, attempt });
    }
    let res: TransportResponse;
    try {
      res = await send({
        url,
        headers,
        body: body.body,
        dispatcher: ctx.dispatcher,
        timeoutMs,
        signal,
        isSend: endpoint.isSend,
      });
    } finally {
      permit?.ended();
      body.dispose();
    }
    const durationMs = Math.round(performance.now() - started);
    logger.debug?.(`oa-messaging: ${what} -> ${res.status}`, { status: res.status, ms: durationMs });
    if (events.has('response')) {
      events.emit('response', {
        endpoint: endpoint.name,
        method: 'POST',
        path: endpoint.path,
        attempt,
        status: res.status,
        durationMs,
      });
    }
    return readAnswer(ctx, endpoint, res);
  };

  return withRetries(
    async (attempt) => {
      if (!endpoint.auth) return attemptOnce(undefined, attempt);
      const token = await ctx.tokens.accessToken(signal);
      try {
        return await attemptOnce(token, attempt);
      } catch (error) {
        // A 401 means the API did not act on the request: renew once (shared by every call that got
        // one) and replay once. A second 401 is final.
        if (!(error instanceof OAUnauthorizedError)) throw error;
        if (!replayable) {
          explainNotReplayable(error);
          throw error;
        }
        logger.info?.(`oa-messaging: ${what} answered 401; renewing the access token`);
        events.emit('retry', {
          endpoint: endpoint.name,
          path: endpoint.path,
          attempt,
          reason: 'unauthorized',
          waitMs: 0,
          error,
        });
        return attemptOnce(await ctx.tokens.accessTokenAfterRejection(token, signal), attempt);
      }
    },
    () => ({
      maxRetries: ctx.maxRetries,
      replayable,
      maxBusyWaitMs: ctx.maxBusyWaitMs,
      maxWaitMs: options.timeoutMs,
      isSend: endpoint.isSend,
      signal,
      onRetry: (retry) => {
        logger.warn?.(
          `oa-messaging: ${what} failed (${retry.error.message}); retrying in ${retry.waitMs} ms`,
          { attempt: retry.attempt, reason: retry.reason, waitMs: retry.waitMs },
        );
        events.emit('retry', { endpoint: endpoint.name, path: endpoint.path, ...retry });
      },
    }),
  );
}

/**
 * A slot in the client's rate limiter. A per-call `timeoutMs` also bounds the time spent queued (the
 * client-wide default does not, so that a bulk send simply waits its turn): past it, the call fails
 * with `OATimeoutError`, not sent, and is not retried.
 */
async function acquireSlot(
  limiter: Limiter,
  what: string,
  bucket: RateLimitBucket,
  first: boolean,
  { signal, timeoutMs }: RequestOptions,
): Promise<Permit> {
  if (timeoutMs === undefined) return limiter.acquire(bucket, { signal, first });
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await limiter.acquire(bucket, {
      signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
      first,
    });
  } catch (error) {
    if (!deadline.aborted || signal?.aborted) throw error;
    throw markFinal(
      new OATimeoutError(`${what} not sent: it waited ${timeoutMs} ms for the ${bucket} rate limit`, {
        cause: error,
      }),
    );
  }
}
