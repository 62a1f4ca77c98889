/**
 * Telemetry that cannot change what happens. The package's tracers, spans, meters and instruments are
 * the app's (its OpenTelemetry SDK: span processors, views, exporters), and any of them may throw: a
 * processor whose `onEnd` throws would otherwise turn a delivered send into a rejection, a webhook's 200
 * into a 500, a delivered outbox job into a failed one; one whose `onStart` throws would block every
 * call. So every part (the client, the webhook handler, the queue's workers and the inbox's order) gets
 * its tracer and meter from here, and nothing else: each call into them is made inside one guard that
 * reports a throw and carries on with what the no-op API would have given. A span that cannot start is a
 * non-recording one carrying its parent's context (the call runs, and what it starts stays in the
 * trace); a span method or an instrument that throws does nothing. Each part reports its first fault
 * through the logger it has, once; later ones are ignored without a word, as telemetry must never flood
 * the log of the app it observes.
 */
import type {
  Context,
  Counter,
  Exception,
  Histogram,
  Link,
  Meter,
  MetricOptions,
  ObservableCallback,
  Span,
  SpanAttributes,
  SpanAttributeValue,
  SpanContext,
  SpanOptions,
  SpanStatus,
  TimeInput,
  Tracer,
} from '@opentelemetry/api';
import { VERSION } from '../version.js';
import type { OTelApi } from './api.js';
import { SCOPE } from './spans.js';

/** Told of each throw of a telemetry call; see {@link reportOnce}. */
export type TelemetryFault = (error: unknown) => void;

/**
 * The fault reporter of one part (`'client'`, `'webhook'`, `'outbox'`...): `log` gets the first fault
 * only, as one line naming the error; the part's logger, or a process warning where it has none.
 */
export function reportOnce(
  part: string,
  log: (message: string, details: { error: unknown }) => void,
): TelemetryFault {
  let reported = false;
  return (error) => {
    if (reported) return;
    reported = true;
    const e = error as { name?: unknown; message?: unknown } | null;
    const what =
      typeof e?.message === 'string' ? `${String(e.name ?? 'Error')}: ${e.message}` : String(error);
    try {
      log(
        `oa-messaging ${part}: telemetry threw (${what}); the call went on as if there were none, and later telemetry faults are ignored without a word`,
        { error },
      );
    } catch {}
  };
}

/** A process warning (`OATelemetryWarning`), for a part without a logger. */
export function warnOnce(part: string): TelemetryFault {
  return reportOnce(part, (message) => globalThis.process?.emitWarning?.(message, 'OATelemetryWarning'));
}

/** `fn()`, or `fallback` when it throws, the throw told to `fault`. */
export function guarded<T>(fault: TelemetryFault, fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch (error) {
    fault(error);
    return fallback;
  }
}

/** The tracer as the package uses it: `startSpan` with an explicit parent context, never throwing. */
export interface SafeTracer {
  startSpan(name: string, options: SpanOptions, parent: Context): Span;
}

/** The meter as the package uses it: instruments that never throw. */
export interface SafeMeter {
  createCounter(name: string, options: MetricOptions): Pick<Counter, 'add'>;
  createHistogram(name: string, options: MetricOptions): Pick<Histogram, 'record'>;
  /** An observable gauge read through `callback` at each collection. */
  observeGauge(name: string, options: MetricOptions, callback: ObservableCallback): void;
}

/** Providers that replace the global ones (a client's options). */
interface Providers {
  tracerProvider?: { getTracer(name: string, version?: string): unknown } | undefined;
  meterProvider?: { getMeter(name: string, version?: string): unknown } | undefined;
}

/**
 * The package's tracer and meter, from the providers given, else the global ones; `meter` is
 * `undefined` for the API's no-op meter (no meter provider registered or passed: the metrics API has
 * no proxy, so that meter stays a no-op), so that no metric's attributes are even built for it.
 */
export function containedTelemetry(
  api: OTelApi,
  fault: TelemetryFault,
  providers: Providers = {},
): { tracer: SafeTracer; meter: SafeMeter | undefined } {
  const tracer = guarded(
    fault,
    () => (providers.tracerProvider ?? api.trace.getTracerProvider()).getTracer(SCOPE, VERSION) as Tracer,
    undefined,
  );
  const meter = guarded(
    fault,
    () => (providers.meterProvider ?? api.metrics.getMeterProvider()).getMeter(SCOPE, VERSION) as Meter,
    undefined,
  );
  const noop = Object.getPrototypeOf(api.createNoopMeter());
  return {
    tracer: new ContainedTracer(api, tracer, fault),
    meter: meter && Object.getPrototypeOf(meter) !== noop ? new ContainedMeter(meter, fault) : undefined,
  };
}

class ContainedTracer implements SafeTracer {
  constructor(
    private readonly api: OTelApi,
    private readonly tracer: Tracer | undefined,
    private readonly fault: TelemetryFault,
  ) {}

  startSpan(name: string, options: SpanOptions, parent: Context): Span {
    const { api, tracer, fault } = this;
    if (tracer) {
      try {
        return new ContainedSpan(tracer.startSpan(name, options, parent), fault, api.INVALID_SPAN_CONTEXT);
      } catch (error) {
        fault(error);
      }
    }
    // What the API's no-op tracer gives: the parent's context, recording nothing.
    const context = guarded(fault, () => api.trace.getSpanContext(parent), undefined);
    return api.trace.wrapSpanContext(context ?? api.INVALID_SPAN_CONTEXT);
  }
}

/** A span whose every method is guarded; chaining methods return this span, as the API's do. */
class ContainedSpan implements Span {
  readonly #span: Span;
  readonly #fault: TelemetryFault;
  /** Read once: the context the API and the children of this span read again and again. */
  readonly #context: SpanContext;

  constructor(span: Span, fault: TelemetryFault, invalid: SpanContext) {
    this.#span = span;
    this.#fault = fault;
    this.#context = guarded(fault, () => span.spanContext(), invalid);
  }

  #do(call: (span: Span) => unknown): this {
    try {
      call(this.#span);
    } catch (error) {
      this.#fault(error);
    }
    return this;
  }

  spanContext(): SpanContext {
    return this.#context;
  }
  setAttribute(key: string, value: SpanAttributeValue): this {
    return this.#do((s) => s.setAttribute(key, value));
  }
  setAttributes(attributes: SpanAttributes): this {
    return this.#do((s) => s.setAttributes(attributes));
  }
  addEvent(name: string, attributesOrStartTime?: SpanAttributes | TimeInput, startTime?: TimeInput): this {
    return this.#do((s) => s.addEvent(name, attributesOrStartTime, startTime));
  }
  addLink(link: Link): this {
    return this.#do((s) => s.addLink(link));
  }
  addLinks(links: Link[]): this {
    return this.#do((s) => s.addLinks(links));
  }
  setStatus(status: SpanStatus): this {
    return this.#do((s) => s.setStatus(status));
  }
  updateName(name: string): this {
    return this.#do((s) => s.updateName(name));
  }
  end(endTime?: TimeInput): void {
    this.#do((s) => s.end(endTime));
  }
  isRecording(): boolean {
    return guarded(this.#fault, () => this.#span.isRecording(), false);
  }
  recordException(exception: Exception, time?: TimeInput): void {
    this.#do((s) => s.recordException(exception, time));
  }
}

class ContainedMeter implements SafeMeter {
  constructor(
    private readonly meter: Meter,
    private readonly fault: TelemetryFault,
  ) {}

  createCounter(name: string, options: MetricOptions): Pick<Counter, 'add'> {
    const { fault } = this;
    const counter = guarded(fault, () => this.meter.createCounter(name, options), undefined);
    return {
      add: (value, attributes, context) =>
        guarded(fault, () => counter?.add(value, attributes, context), undefined),
    };
  }

  createHistogram(name: string, options: MetricOptions): Pick<Histogram, 'record'> {
    const { fault } = this;
    const histogram = guarded(fault, () => this.meter.createHistogram(name, options), undefined);
    return {
      record: (value, attributes, context) =>
        guarded(fault, () => histogram?.record(value, attributes, context), undefined),
    };
  }

  observeGauge(name: string, options: MetricOptions, callback: ObservableCallback): void {
    guarded(
      this.fault,
      () => this.meter.createObservableGauge(name, options).addCallback(callback),
      undefined,
    );
  }
}
