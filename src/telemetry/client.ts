/**
 * A client's traces and metrics. One span per logical call (`oa <method>`, or `oa token` for a
 * renewal's exchange), opened by an `aroundCall` hook that the client installs ahead of the user's
 * (`hooks`), which runs the call inside it; everything else is read from the
 * client's own events (`request`, `response`, `retry`, `rateLimitWait`), which the pipeline already
 * emits in the call's async context: one mechanism, no second set of call sites. Attributes hold ids,
 * sizes, statuses and classes only: never a secret, a token or a message text.
 *
 * Each attempt's HTTP exchange is a child span with the HTTP client conventions, rather than those
 * conventions on the call span: a call with retries makes several exchanges, each with its own status
 * and duration, which one span cannot hold (the conventions count a resend as a span of its own).
 */
import type { Attributes, Context, Counter, Histogram, Span } from '@opentelemetry/api';
import type { ClientEvents, OARequestEvent, OAResponseEvent, OARetryEvent } from '../core/events.js';
import type { CallHooks } from '../core/hooks.js';
import type { Logger } from '../core/logger.js';
import type { RateLimits } from '../core/rate-limit.js';
import { isOAError } from '../errors.js';
import type { OTelApi } from './api.js';
import { containedTelemetry, reportOnce, type SafeMeter, type SafeTracer } from './contain.js';
import { otelApi } from './node-api.js';
import { apiMissing, providersWanted, type TelemetryOptions } from './providers.js';
import { errorSummary, failSpan } from './spans.js';

/** What the hook tells of the call it opens a span for. */
export interface TracedEndpoint {
  readonly name: string;
  readonly path: string;
  readonly bucket: 'general' | 'upload';
}

/** One call's span, and the attempt under way (the context value the event listeners read). */
interface CallTrace {
  readonly method: string;
  readonly bucket: 'general' | 'upload';
  readonly span: Span;
  attempt: Span | undefined;
  attempts: number;
}

interface Instruments {
  calls: Pick<Counter, 'add'>;
  attemptDuration: Pick<Histogram, 'record'>;
  retries: Pick<Counter, 'add'>;
  rateLimitWait: Pick<Histogram, 'record'>;
}

/**
 * The client's telemetry, or `undefined` when there is none to do (`@opentelemetry/api` absent, or no
 * provider passed or registered): the pipeline then runs no tracing code at all. A tracer or meter that
 * throws changes no call's outcome (see `contain.ts`); its first fault is logged through `logger`
 * (`warn`).
 */
export function clientTelemetry(
  options: TelemetryOptions,
  events: ClientEvents,
  baseUrl: URL,
  limits: RateLimits | false,
  logger: Logger = {},
): ClientTelemetry | undefined {
  const wanted = providersWanted(options);
  const api = otelApi(wanted);
  if (wanted && !api) throw apiMissing();
  return api ? new ClientTelemetry(api, options, events, baseUrl, limits, logger) : undefined;
}

/** See {@link clientTelemetry}. */
export class ClientTelemetry {
  readonly #api: OTelApi;
  readonly #tracer: SafeTracer;
  readonly #instruments: Instruments | undefined;
  readonly #key: symbol;
  readonly #server: Attributes;
  /** The client's `account` option, on every span it opens. */
  readonly #account: string | undefined;
  /** Request times per rate-limit bucket in the last window, for the utilisation gauge. */
  readonly #sent = { general: [] as number[], upload: [] as number[] };
  readonly #limits: RateLimits | false;
  /**
   * `false` with the API's no-op meter (no meter provider registered or passed): then no metric is
   * recorded, not even into the no-op instruments, whose attributes a call would still build.
   */
  readonly #metered: boolean;
  /** The client's tracing as hooks of the one seam around a call: its span around the whole call. */
  readonly hooks: CallHooks = {
    aroundCall: [
      (state, next) =>
        this.call(
          // The uploads' paths: /upload/image, /upload/video, /upload/audio.
          {
            name: state.endpoint,
            path: state.path,
            bucket: state.path.includes('/upload/') ? 'upload' : 'general',
          },
          next,
          state.renewal,
        ),
    ],
  };

  constructor(
    api: OTelApi,
    options: TelemetryOptions,
    events: ClientEvents,
    baseUrl: URL,
    limits: RateLimits | false,
    logger: Logger,
  ) {
    this.#api = api;
    const fault = reportOnce('client', (message, details) => logger.warn?.(message, details));
    const { tracer, meter } = containedTelemetry(api, fault, options);
    this.#tracer = tracer;
    this.#metered = meter !== undefined;
    this.#key = api.createContextKey('oa-messaging call');
    this.#limits = limits;
    this.#account = options.account;
    const port = baseUrl.port || (baseUrl.protocol === 'https:' ? '443' : '80');
    this.#server = { 'server.address': baseUrl.hostname, 'server.port': Number(port) };
    this.#instruments = meter && this.#makeInstruments(meter);
    events.on('request', (e) => this.#request(e));
    events.on('response', (e) => this.#response(e));
    events.on('retry', (e) => this.#retry(e));
    events.on('rateLimitWait', (e) => {
      const trace = this.#current();
      trace?.span.addEvent('oa.rate_limit_wait', {
        'oa.wait_ms': e.waitedMs,
        'oa.rate_limit.bucket': e.bucket,
      });
      this.#instruments?.rateLimitWait.record(e.waitedMs / 1000, {
        'oa.method': e.endpoint,
        'oa.rate_limit.bucket': e.bucket,
      });
    });
  }

  #makeInstruments(meter: SafeMeter): Instruments {
    const limits = this.#limits;
    if (limits) {
      meter.observeGauge(
        'oa.client.rate_limit.utilization',
        { description: "Share of the client's rate-limit window this process used", unit: '1' },
        (result) => {
          for (const bucket of ['general', 'upload'] as const) {
            const { max, windowMs } = limits[bucket];
            result.observe(this.#inWindow(bucket, windowMs) / max, { 'oa.rate_limit.bucket': bucket });
          }
        },
      );
    }
    return {
      calls: meter.createCounter('oa.client.calls', {
        description: 'Client calls, by method and outcome',
        unit: '{call}',
      }),
      attemptDuration: meter.createHistogram('oa.client.attempt.duration', {
        description: 'Duration of each HTTP exchange of a call, from sending to the last byte',
        unit: 's',
      }),
      retries: meter.createCounter('oa.client.retries', {
        description: 'Attempts tried again, by reason',
        unit: '{retry}',
      }),
      rateLimitWait: meter.createHistogram('oa.client.rate_limit.wait.duration', {
        description: "Time a request waited in the client's rate limiter",
        unit: 's',
      }),
    };
  }

  #inWindow(bucket: 'general' | 'upload', windowMs: number): number {
    const times = this.#sent[bucket];
    const since = performance.now() - windowMs;
    while (times.length > 0 && (times[0] as number) < since) times.shift();
    return times.length;
  }

  #current(): CallTrace | undefined {
    return this.#api.context.active().getValue(this.#key) as CallTrace | undefined;
  }

  /**
   * Runs `fn` (the call) inside its span: `oa <method>`, kind CLIENT; with `token`, the renewal's
   * exchange as `oa token`. A call of the same method made inside one (each try of `sendVideo` while
   * its ticket converts) belongs to the outer span.
   */
  call<T>(endpoint: TracedEndpoint, fn: () => Promise<T>, token = false): Promise<T> {
    const api = this.#api;
    const active: Context = api.context.active();
    const outer = active.getValue(this.#key) as CallTrace | undefined;
    if (!token && outer?.method === endpoint.name) return fn();
    const span = this.#tracer.startSpan(
      token ? 'oa token' : `oa ${endpoint.name}`,
      {
        kind: token ? api.SpanKind.INTERNAL : api.SpanKind.CLIENT,
        attributes:
          this.#account === undefined
            ? { 'oa.method': endpoint.name, 'oa.endpoint': endpoint.path }
            : { 'oa.method': endpoint.name, 'oa.endpoint': endpoint.path, 'oa.account': this.#account },
      },
      active,
    );
    // A span that records nothing (the no-op tracer, or a trace sampled out) and no metrics: the call
    // runs under the span's context, so that what it starts keeps the sampling decision, and nothing
    // else; the event listeners find no call to follow.
    if (!this.#metered && !span.isRecording()) return api.context.with(api.trace.setSpan(active, span), fn);
    const trace: CallTrace = {
      method: token ? '' : endpoint.name,
      bucket: endpoint.bucket,
      span,
      attempt: undefined,
      attempts: 0,
    };
    return this.#follow(
      trace,
      api.trace.setSpan(active, span).setValue(this.#key, trace),
      endpoint,
      fn,
      token,
    );
  }

  /**
   * Runs the call in `inside`, the context that holds its trace, and ends the trace as it settles: the
   * call's own outcome, whatever ending the trace does.
   */
  async #follow<T>(
    trace: CallTrace,
    inside: Context,
    endpoint: TracedEndpoint,
    fn: () => Promise<T>,
    token: boolean,
  ): Promise<T> {
    let result: T;
    try {
      result = await this.#api.context.with(inside, fn);
    } catch (error) {
      this.#end(trace, endpoint.name, error ?? new Error('rejected'), token);
      throw error;
    }
    this.#end(trace, endpoint.name, undefined, token);
    return result;
  }

  #end(trace: CallTrace, method: string, error: unknown, token: boolean): void {
    const { span } = trace;
    this.#endAttempt(trace, error);
    span.setAttribute('oa.attempts', trace.attempts);
    let outcome = 'ok';
    if (error !== undefined) {
      const deliveryUnknown = isOAError(error) && error.deliveryUnknown;
      outcome = isOAError(error) ? error.retryClass : 'final';
      span.setAttribute('oa.error.class', outcome);
      span.setAttribute('oa.delivery_unknown', deliveryUnknown);
      const details = error as { status?: unknown; requestId?: unknown };
      if (typeof details.status === 'number') span.setAttribute('http.response.status_code', details.status);
      if (typeof details.requestId === 'string') span.setAttribute('oa.request_id', details.requestId);
      failSpan(this.#api, span, error);
    } else {
      span.setAttribute('oa.delivery_unknown', false);
    }
    span.end();
    if (!token) this.#instruments?.calls.add(1, { 'oa.method': method, 'oa.outcome': outcome });
  }

  #endAttempt(trace: CallTrace, error: unknown): void {
    const attempt = trace.attempt;
    if (!attempt) return;
    trace.attempt = undefined;
    if (error !== undefined) failSpan(this.#api, attempt, error);
    attempt.end();
  }

  #request(e: OARequestEvent): void {
    const trace = this.#current();
    if (this.#limits && this.#metered) {
      const now = performance.now();
      this.#sent.general.push(now);
      if (trace?.bucket === 'upload') this.#sent.upload.push(now);
      // Bounded by the window's size: an idle gauge must not let it grow.
      if (this.#sent.general.length > 2 * this.#limits.general.max) this.#sent.general.shift();
      if (this.#sent.upload.length > 2 * this.#limits.upload.max) this.#sent.upload.shift();
    }
    if (!trace) return;
    this.#endAttempt(trace, undefined);
    trace.attempts++;
    const attributes: Attributes = {
      ...this.#server,
      'http.request.method': e.method,
      'url.template': e.path,
      'oa.attempt': trace.attempts,
    };
    if (trace.attempts > 1) attributes['http.request.resend_count'] = trace.attempts - 1;
    trace.attempt = this.#tracer.startSpan(
      `${e.method} ${e.path}`,
      { kind: this.#api.SpanKind.CLIENT, attributes },
      this.#api.context.active(),
    );
  }

  #response(e: OAResponseEvent): void {
    this.#instruments?.attemptDuration.record(e.durationMs / 1000, {
      ...this.#server,
      'oa.method': e.endpoint,
      'http.request.method': e.method,
      'http.response.status_code': e.status,
    });
    const trace = this.#current();
    const attempt = trace?.attempt;
    if (!trace || !attempt) return;
    trace.attempt = undefined;
    attempt.setAttribute('http.response.status_code', e.status);
    if (e.requestId !== undefined) {
      attempt.setAttribute('oa.request_id', e.requestId);
      trace.span.setAttribute('oa.request_id', e.requestId);
    }
    trace.span.setAttribute('http.response.status_code', e.status);
    if (e.status >= 400) {
      attempt.setAttribute('error.type', String(e.status));
      attempt.setStatus({ code: this.#api.SpanStatusCode.ERROR });
    }
    attempt.end();
  }

  #retry(e: OARetryEvent): void {
    this.#instruments?.retries.add(1, { 'oa.method': e.endpoint, 'oa.retry.reason': e.reason });
    const trace = this.#current();
    if (!trace) return;
    // An exchange that failed without an answer (refused, reset, timed out) ends here, failed.
    this.#endAttempt(trace, e.error);
    trace.span.addEvent(e.reason === 'video_converting' ? 'oa.transcode_wait' : 'oa.retry', {
      'oa.retry.reason': e.reason,
      'oa.wait_ms': e.waitMs,
      'oa.attempt': e.attempt,
      'error.type': errorSummary(e.error).type,
    });
  }
}
