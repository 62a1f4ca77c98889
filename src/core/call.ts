/**
 * What one call carries down the path (its endpoint, limits, hooks, and the slot and token of the
 * attempt under way), and what it reads of the client: the bookkeeping of `pipeline.ts`, kept apart so
 * that the steps there read top to bottom.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import type { Endpoint } from '../endpoints.js';
import type { ClientTelemetry } from '../telemetry/client.js';
import type { PreparedUpload, UploadOptions } from '../uploads/types.js';
import type { TokenManager } from './auth.js';
import { beforeSendOf, type CallControl, type CallRegistry, notDeliveredOf } from './call-control.js';
import type { ClientEvents } from './events.js';
import type { Logger } from './logger.js';
import { type AppInfo, type OAResponseInfo, userAgent } from './options.js';
import type { Limiter, Permit } from './rate-limit.js';
import type { Retry, RetryState } from './retry.js';
import type { Transport } from './transport.js';
/** What the steps read of the client: made once from its options (see `ClientContext`). */
export interface PipelineContext {
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
  /** Spans and metrics; `undefined` when OpenTelemetry is absent or has no provider (nothing runs). */
  readonly telemetry: ClientTelemetry | undefined;
  /** Credentials to scrub from anything that leaves the SDK (messages, logs, error bodies). */
  secrets(): Iterable<string | undefined>;
}

/** What one attempt sends: the same JSON text each time, or a fresh multipart stream. */
export interface AttemptBody {
  body: string | Readable;
  /** Content headers: `content-type`, and `content-length` when known. */
  headers: Readonly<Record<string, string>>;
  dispose?(): void;
}

/** One call as it goes down the path: made once per call; each step reads it, each attempt updates it. */
export class Call<R extends z.ZodType> implements RetryState {
  readonly ctx: PipelineContext;
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
  /** Runs when an attempt whose request left certainly did not deliver (see `NOT_DELIVERED`). */
  readonly notDelivered: (() => unknown) | undefined;
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
    ctx: PipelineContext,
    endpoint: Endpoint<z.ZodType, R>,
    options: UploadOptions,
    body: AttemptBody | PreparedUpload,
  ) {
    this.ctx = ctx;
    this.endpoint = endpoint;
    this.control = ctx.calls.start(`POST ${endpoint.path}`, options);
    this.bucket = endpoint.bucket;
    this.timeoutMs = this.bucket === 'upload' ? ctx.uploadTimeoutMs : ctx.timeoutMs;
    this.maxRetries = options.maxRetries ?? ctx.maxRetries;
    this.maxBusyWaitMs = ctx.maxBusyWaitMs;
    this.isSend = endpoint.isSend;
    this.usesToken = endpoint.auth;
    this.beforeSend = beforeSendOf(options);
    this.notDelivered = notDeliveredOf(options);
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

/**
 * The headers each request carries: built once per client (and once per token for the bearer), so
 * that the hot path spreads no object per call.
 */
export class RequestHeaders {
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
