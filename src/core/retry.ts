/**
 * One retry loop with one budget per call ("Retries: never send a message twice" in API.md). Every
 * retryable failure draws on it: answers that ask to wait (429, `JOB_BUSY`) on the total wait
 * `maxBusyWaitMs`, failures (not sent; for auth and uploads also outcome unknown) on `maxRetries`, a
 * 401 on its one replay; and every wait ends with the call's deadline, `close()` or `signal`. The
 * call's state (`Call`), which the loop repeats and each step of `pipeline.ts` reads, lives here too.
 */
import type { Readable } from 'node:stream';
import type * as z from 'zod/mini';
import type { Endpoint } from '../endpoints.js';
import { isOAError, type OAError, OARateLimitError, reissued } from '../errors.js';
import type { OACallState } from '../schemas/hooks.js';
import type { PreparedUpload, UploadOptions } from '../uploads/types.js';
import type { Renewer, TokenManager } from './auth.js';
import type { CallControl, CallRegistry } from './call-control.js';
import type { ClientEvents, RetryReason } from './events.js';
import { type CallHooks, callState, joinHooks } from './hooks.js';
import type { Logger } from './logger.js';
import type { OAResponseInfo, RequestHeaders } from './options.js';
import type { Limiter, Permit } from './rate-limit.js';
import type { Transport } from './transport.js';

/**
 * What the steps read of the client: made once from its options (see `ClientContext`). It renews the
 * tokens its calls need itself (a {@link Renewer}), with its own credentials.
 */
export interface PipelineContext extends Renewer {
  readonly baseUrl: URL;
  /** Each endpoint's URL, made once: nothing reads or changes it after. */
  readonly urls: Map<string, URL>;
  readonly headers: RequestHeaders;
  /** Per-attempt limit. */
  readonly timeoutMs: number;
  /** The per-attempt limit of uploads. */
  readonly uploadTimeoutMs: number;
  readonly maxRetries: number;
  readonly maxBusyWaitMs: number;
  /** `undefined` when `rateLimit: false`. */
  readonly limiter: Limiter | undefined;
  readonly transport: Transport;
  readonly events: ClientEvents;
  readonly logger: Logger;
  readonly tokens: TokenManager;
  readonly calls: CallRegistry;
  /**
   * The client's hooks: its own tracing's (when it traces), then the `hooks` option's; `undefined`
   * when there are none, so that a call without hooks runs none of their code.
   */
  readonly hooks: CallHooks | undefined;
  /** Credentials to scrub from anything that leaves the SDK (messages, logs, error bodies). */
  secrets(): Iterable<string | undefined>;
  /**
   * Set while the client does not yet know where to send (an account's client before its credentials,
   * which may name a base URL, were read): a call awaits it before its first attempt.
   */
  readonly prepare?: (() => Promise<void>) | undefined;
}

/** What one attempt sends: the same JSON text each time, or a fresh multipart body. */
export interface AttemptBody {
  body: string | Readable | FormData;
  /** Content headers: `content-type`, and `content-length` when known. */
  headers: Readonly<Record<string, string>>;
  dispose?(): void;
  /** Told once the whole body has gone out, when the transport cannot count it as it goes. */
  sent?: (() => void) | undefined;
}

/**
 * One call as it goes down the path, the state the retry loop repeats: made once per call; each step
 * of `pipeline.ts` reads it, each attempt updates it (its slot and token, its number, why it is a retry).
 */
export class Call<R extends z.ZodMiniType> {
  readonly ctx: PipelineContext;
  /** What is called, named in the retry's log line and event. */
  readonly endpoint: Endpoint<z.ZodMiniType, R>;
  /** The call's deadline, `close()` and signal: they end every wait. */
  readonly control: CallControl;
  readonly bucket: 'general' | 'upload';
  /** This attempt's limit. */
  readonly timeoutMs: number;
  /** How many failures (not sent; outcome unknown when not a send) may be retried; 0: no retry at all. */
  readonly maxRetries: number;
  /** The longest a call waits, in all, on answers that ask it to wait (429, `JOB_BUSY`). */
  readonly maxBusyWaitMs: number;
  /** A send or broadcast: repeated only when the API cannot have acted on it. */
  readonly isSend: boolean;
  /** The request carries an access token: a 401 renews it and replays the request once. */
  readonly usesToken: boolean;
  /** The client's hooks, then the call's own (`hooks.ts`); `undefined` when there are none. */
  readonly hooks: CallHooks | undefined;
  /** What the hooks are told of the call: made only when it has hooks. */
  readonly state: OACallState;
  /** The caller's `onResponse`, told of the answer that settled the call. */
  readonly onResponse: ((response: OAResponseInfo) => void) | undefined;
  /** A campaign's send (`RequestOptions.bulk`): it queues for its slot behind the rest. */
  readonly bulk: boolean;
  /** Its share of the quota left to the other requests (`RequestOptions.replyReserve`), for bulk calls. */
  readonly replyReserve: number | undefined;
  readonly #body: AttemptBody | PreparedUpload;
  readonly #onProgress: UploadOptions['onProgress'];
  /** An upload's body has been made (read) once. */
  #read = false;
  /** The attempt under way: 1, then 2 after a retry... */
  attempt = 0;
  /** Why the attempt under way is a retry; `undefined` for the first. */
  previous: Retry | undefined = undefined;
  /** The rate-limit slot the attempt holds. */
  permit: Permit | undefined = undefined;
  /** The access token the attempt sends: a 401 renews from this one. */
  token: string | undefined = undefined;

  constructor(
    ctx: PipelineContext,
    endpoint: Endpoint<z.ZodMiniType, R>,
    options: UploadOptions,
    body: AttemptBody | PreparedUpload,
    control?: CallControl,
    params?: unknown,
    renewal = false,
  ) {
    this.ctx = ctx;
    this.endpoint = endpoint;
    this.control = control ?? ctx.calls.start(`POST ${endpoint.path}`, options);
    this.bucket = endpoint.bucket;
    this.timeoutMs = this.bucket === 'upload' ? ctx.uploadTimeoutMs : ctx.timeoutMs;
    this.maxRetries = options.maxRetries ?? ctx.maxRetries;
    this.maxBusyWaitMs = ctx.maxBusyWaitMs;
    this.isSend = endpoint.isSend;
    this.usesToken = endpoint.auth;
    // The client's hooks as they are, unless the call brings its own: no allocation per call without.
    // A call without hooks of its own runs the client's as they are (nothing joined on the warm path).
    this.hooks = options.hooks === undefined ? ctx.hooks : joinHooks(ctx.hooks, options.hooks);
    // Read only where `hooks` is (a JSON call's params, as checked; the client's own renewal).
    this.state = (this.hooks && callState(endpoint, params, renewal)) as OACallState;
    this.onResponse = options.onResponse;
    this.bulk = options.bulk === true;
    this.replyReserve = options.replyReserve;
    this.#body = body;
    this.#onProgress = options.onProgress;
  }

  /**
   * This attempt's body: the JSON text, or the upload's multipart body made afresh, in the form the
   * client's transport sends.
   */
  makeBody(): AttemptBody | Promise<AttemptBody> {
    const body = this.#body;
    if (!('discard' in body)) return body;
    this.#read = true;
    return this.ctx.transport.multipart(body, this.#onProgress);
  }

  /**
   * Whether the body can be sent again: JSON always; an upload from a one-shot stream until an attempt
   * has read it. Nothing is retried once it cannot be, and a failure that would have been says why; a
   * failure before the body was first made (waiting for a token, say) is retried as usual.
   */
  replayable(): boolean {
    const body = this.#body;
    return !('discard' in body) || body.replayable || !this.#read;
  }
}

/** A retry, decided. */
export interface Retry {
  reason: RetryReason;
  waitMs: number;
  /** The attempt that failed. */
  attempt: number;
  error: OAError;
}

/** Backoff for failures: 500 ms doubling to 8 s, with jitter. */
const FAILURE_BACKOFF = { initialMs: 500, maxMs: 8_000 };
/** Backoff for a 429 without a usable Retry-After and for `JOB_BUSY`: 1 s doubling to 15 s, with jitter. */
const BUSY_BACKOFF = { initialMs: 1_000, maxMs: 15_000 };
/**
 * A Retry-After under this (zero, a date in the past, a negative or tiny number) is not followed: the
 * call waits a backoff instead (and it counts in the wait budget), so that a server that always says
 * "now" cannot make it spin.
 */
const MIN_RETRY_AFTER_MS = 100;

/** The least time a retry must leave before the call's deadline for its attempt. */
const MIN_ATTEMPT_MS = 250;

const NOT_REPLAYABLE =
  ' (not retried: the file came from a stream, which cannot be read twice; ' +
  'pass a path, Buffer or Blob to let the SDK retry)';

/** The failure, saying in its message that it was not retried because its body was read once. */
function notReplayable(error: OAError): OAError {
  return error.message.endsWith(NOT_REPLAYABLE)
    ? error
    : reissued(error, { message: error.message + NOT_REPLAYABLE });
}

/** A failure's retry class, fixed when it was made; anything not the SDK's is final. */
function retryClassOf(error: unknown) {
  return isOAError(error) ? error.retryClass : 'final';
}

/** Exponential backoff with jitter: a random wait between half and all of the step. */
function backoffMs(step: number, { initialMs, maxMs }: { initialMs: number; maxMs: number }): number {
  const ceiling = Math.min(maxMs, initialMs * 2 ** Math.max(0, step - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** What one call has left to spend on retries. */
class RetryBudget {
  readonly #policy: Call<z.ZodMiniType>;
  #retriesLeft: number;
  #busyWaitLeftMs: number;
  #busyStep = 0;
  #failureStep = 0;
  #replayed = false;

  constructor(policy: Call<z.ZodMiniType>) {
    this.#policy = policy;
    this.#retriesLeft = policy.maxRetries;
    this.#busyWaitLeftMs = policy.maxBusyWaitMs;
  }

  /**
   * The retry `error` allows, drawn from the budget; `undefined` when it is final; `false` when it
   * would have been retried but its body cannot be sent again.
   */
  next(error: unknown): { reason: RetryReason; waitMs: number } | false | undefined {
    const kind = retryClassOf(error);
    if (kind === 'final') return undefined;
    const policy = this.#policy;
    if (kind === 'unauthorized') {
      if (!policy.usesToken || this.#replayed) return undefined;
      if (!policy.replayable()) return false;
      this.#replayed = true;
      return { reason: 'unauthorized', waitMs: 0 };
    }
    if (policy.maxRetries === 0) return undefined;
    if (kind === 'rejected') {
      const asked = error instanceof OARateLimitError ? error.retryAfterMs : undefined;
      const waitMs =
        asked !== undefined && asked >= MIN_RETRY_AFTER_MS
          ? asked
          : backoffMs(++this.#busyStep, BUSY_BACKOFF);
      if (waitMs > this.#busyWaitLeftMs) return undefined;
      if (!policy.replayable()) return false;
      this.#busyWaitLeftMs -= waitMs;
      return { reason: error instanceof OARateLimitError ? 'rate_limited' : 'job_busy', waitMs };
    }
    if (kind === 'outcome_unknown' && policy.isSend) return undefined;
    if (this.#retriesLeft <= 0) return undefined;
    if (!policy.replayable()) return false;
    this.#retriesLeft--;
    return { reason: kind, waitMs: backoffMs(++this.#failureStep, FAILURE_BACKOFF) };
  }
}

/**
 * Runs `attempt` and repeats it while the call's budget allows; the last error is the one the caller
 * sees. A wait that would outlast the call's deadline, or leave its attempt under 250 ms, is not
 * started: the error goes back at once.
 */
export async function withRetries<R extends z.ZodMiniType>(
  call: Call<R>,
  attempt: (call: Call<R>) => Promise<z.output<R>>,
): Promise<z.output<R>> {
  let budget: RetryBudget | undefined;
  const { control } = call;
  for (call.attempt = 1; ; call.attempt++) {
    try {
      return await attempt(call);
    } catch (error) {
      // Made on the first failure only: most calls succeed at once.
      budget ??= new RetryBudget(call);
      const next = control.stopped ? undefined : budget.next(error);
      if (next === false) throw notReplayable(error as OAError);
      const left = control.remainingMs();
      // A wait that would leave the next attempt next to no time is not started either: that attempt
      // would end in the deadline's OATimeoutError instead of the answer the caller can act on.
      if (!next || (left !== undefined && next.waitMs > left - MIN_ATTEMPT_MS)) throw error;
      call.previous = {
        ...next,
        waitMs: Math.round(next.waitMs),
        attempt: call.attempt,
        error: error as OAError,
      };
      reportRetry(call, call.previous);
      if (next.waitMs > 0) await control.sleep(next.waitMs, 'waiting to retry');
    }
  }
}

function reportRetry({ ctx, endpoint }: Call<z.ZodMiniType>, retry: Retry): void {
  ctx.logger.warn?.(
    `oa-messaging: POST ${endpoint.path} failed (${retry.error.message}); retrying in ${retry.waitMs} ms`,
    { attempt: retry.attempt, reason: retry.reason, waitMs: retry.waitMs },
  );
  ctx.events.emit('retry', { endpoint: endpoint.name, path: endpoint.path, ...retry });
}
