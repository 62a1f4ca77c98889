import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  errorFromAnswer,
  OAConnectionError,
  OAResponseValidationError,
  OAUnauthorizedError,
  OAValidationError,
} from '../errors.js';
import { VERSION } from '../version.js';
import type { TokenManager } from './auth.js';
import type { Logger } from './logger.js';
import { redactJson, redactText } from './redact.js';
import { withRetries } from './retry.js';
import { send, type TransportResponse } from './transport.js';
import { formatIssues, toIssues, validate } from './validate.js';

/** Per-call options, the last argument of every method. */
export interface RequestOptions {
  /** Cancels the call wherever it is waiting; the call rejects with `OAAbortError`. */
  signal?: AbortSignal;
  /** Per-attempt limit in ms, overriding the client's `timeoutMs`. */
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
  dispatcher: () => Dispatcher;
  timeoutMs: number;
  maxRetries: number;
  logger: Logger;
  tokens: TokenManager;
  /** Credentials to scrub from anything that leaves the SDK (messages, logs, error bodies). */
  secrets: () => Iterable<string | undefined>;
  isClosed: () => boolean;
}

const USER_AGENT = `oa-messaging/${VERSION} node/${process.version}`;

function urlFor(base: URL, path: string): URL {
  const url = new URL(base);
  url.pathname = `${base.pathname.replace(/\/+$/, '')}${path}`;
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

/**
 * The one way a call flows: validate -> retry policy -> auth (token, one 401 refresh) -> transport ->
 * map the answer -> parse the response. None of the steps knows which endpoint it serves.
 */
export async function callEndpoint<P extends z.ZodType, R extends z.ZodType>(
  ctx: RequestContext,
  endpoint: Endpoint<P, R>,
  params: unknown,
  options: RequestOptions = {},
): Promise<z.output<R>> {
  const body = JSON.stringify(validate(endpoint.params, params, `${endpoint.name} params`));
  if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
    throw new OAValidationError(`Invalid ${endpoint.name} options: timeoutMs must be a positive number`, [
      { path: ['timeoutMs'], message: 'Must be a positive number' },
    ]);
  }
  if (ctx.isClosed()) throw new OAConnectionError(`POST ${endpoint.path} not sent: the client is closed`);
  const what = `POST ${endpoint.path}`;
  const url = urlFor(ctx.baseUrl, endpoint.path);
  const timeoutMs = options.timeoutMs ?? ctx.timeoutMs;

  const attemptOnce = async (token: string | undefined): Promise<z.output<R>> => {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': USER_AGENT,
    };
    if (token !== undefined) headers.authorization = `Bearer ${token}`;
    const started = performance.now();
    ctx.logger.debug?.(`oa-messaging: ${what}`);
    const res = await send({
      url,
      headers,
      body,
      dispatcher: ctx.dispatcher(),
      timeoutMs,
      signal: options.signal,
      isSend: endpoint.isSend,
    });
    ctx.logger.debug?.(`oa-messaging: ${what} -> ${res.status}`, {
      status: res.status,
      ms: Math.round(performance.now() - started),
    });
    return readAnswer(ctx, endpoint, res);
  };

  return withRetries(
    async () => {
      if (!endpoint.auth) return attemptOnce(undefined);
      const token = await ctx.tokens.accessToken(options.signal);
      try {
        return await attemptOnce(token);
      } catch (error) {
        // A 401 means the API did not act on the request: renew once (shared by every call that got
        // one) and replay once. A second 401 is final.
        if (!(error instanceof OAUnauthorizedError)) throw error;
        ctx.logger.info?.(`oa-messaging: ${what} answered 401; renewing the access token`);
        return attemptOnce(await ctx.tokens.accessTokenAfterRejection(token, options.signal));
      }
    },
    { maxRetries: ctx.maxRetries, isSend: endpoint.isSend, signal: options.signal, logger: ctx.logger, what },
  );
}
