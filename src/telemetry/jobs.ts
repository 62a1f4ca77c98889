/**
 * The trace context of queue jobs: the producer's span context goes into the job (BullMQ's
 * `telemetry.metadata`, the field it keeps for context propagation) as a W3C `traceparent`, written
 * here rather than through the global propagator so that it travels whatever propagator an app
 * registers (or none). The worker's span continues that trace: as a child of the producer for a job
 * added on its own (a webhook delivery's inbox job, the reply a handler adds), or linked to it for a
 * job of `addMany` (a campaign of 10,000 sends is 10,000 traces, each linked to the one that added it).
 */
import type { Context, Link, Span, SpanContext } from '@opentelemetry/api';
import { containedTelemetry, guarded, type SafeTracer, warnOnce } from './contain.js';
import { otelApi } from './runtime.js';
import { failSpan } from './spans.js';

/** What a job's `telemetry.metadata` holds. */
interface JobTrace {
  traceparent: string;
  /** The worker links to the producer instead of continuing its trace. */
  link?: true;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The active span's context as a W3C `traceparent`, or `undefined` (no `@opentelemetry/api`, no
 * provider, no span). Also what an inbox of `order: 'sender'` keeps with each pending event, whose
 * handling then runs in that trace ({@link inDeliveryTrace}).
 */
export function activeTraceparent(): string | undefined {
  const api = otelApi();
  // The active span may be the app's own: a span that throws is no context.
  const span = api && guarded(producerFault, () => api.trace.getSpanContext(api.context.active()), undefined);
  if (!api || !span || !api.trace.isSpanContextValid(span)) return undefined;
  const flags = span.traceFlags.toString(16).padStart(2, '0');
  return `00-${span.traceId}-${span.spanId}-${flags}`;
}

/**
 * The job options that carry the active trace context, or `undefined` (no `@opentelemetry/api`, no
 * provider, no span): spread into a job's options.
 */
export function jobTraceOptions(
  relation: 'parent' | 'link',
): { telemetry: { metadata: string } } | undefined {
  const traceparent = activeTraceparent();
  if (!traceparent) return undefined;
  const trace: JobTrace = { traceparent };
  if (relation === 'link') trace.link = true;
  return { telemetry: { metadata: JSON.stringify(trace) } };
}

/** The first fault of a span read when a job is added, told once per process. */
const producerFault = warnOnce('queue');

/** The job as the wrapper reads it. */
interface TracedJob {
  id?: string | undefined;
  attemptsMade?: number;
  opts?: { attempts?: number | undefined; telemetry?: { metadata?: string | undefined } | undefined };
}

/** What became of an outbox job, for the `oa.outbox.jobs` counter. */
type JobState = 'delivered' | 'processed' | 'retry' | 'failed' | 'unknown';

/** The span context a `traceparent` names, as a remote parent; `undefined` for anything else. */
function remoteContext(traceparent: unknown): SpanContext | undefined {
  const match = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent) : null;
  if (!match) return undefined;
  const [, traceId = '', spanId = '', flags = '00'] = match;
  return { traceId, spanId, traceFlags: Number.parseInt(flags, 16), isRemote: true };
}

/** Reads the producer's context from a job; anything unreadable is no context (a job from elsewhere). */
function producerOf(metadata: string | undefined): { trace: JobTrace; context: SpanContext } | undefined {
  if (!metadata) return undefined;
  try {
    const trace = JSON.parse(metadata) as JobTrace;
    const context = remoteContext(trace?.traceparent);
    return context ? { trace, context } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The queue's job processor, each job run inside a CONSUMER span `process <queue>` that continues the
 * producer's trace, counted by state (`oa.outbox.jobs`, `oa.inbox.jobs`). `process` itself when
 * `@opentelemetry/api` is absent or nothing is registered.
 */
export function tracedProcessor<J extends TracedJob>(
  what: string,
  queue: string,
  process: (job: J, token?: string) => Promise<unknown>,
  endedUnknown?: (error: Error) => boolean,
): (job: J, token?: string) => Promise<unknown> {
  const api = otelApi();
  if (!api) return process;
  // The queue has no logger: its first telemetry fault is a process warning.
  const { tracer, meter } = containedTelemetry(api, warnOnce(what));
  const jobs = meter?.createCounter(`oa.${what}.jobs`, {
    description: `${what} jobs processed, by state`,
    unit: '{job}',
  });
  const stateOf = (job: J, error: unknown): JobState => {
    const e = error as Error;
    if (endedUnknown?.(e)) return 'unknown';
    if (e?.name === 'UnrecoverableError') return 'failed';
    return (job.attemptsMade ?? 0) + 1 >= (job.opts?.attempts ?? 1) ? 'failed' : 'retry';
  };
  return async (job, token) => {
    const producer = producerOf(job.opts?.telemetry?.metadata);
    let parent: Context = api.context.active();
    const links: Link[] = [];
    if (producer) {
      if (producer.trace.link) links.push({ context: producer.context });
      else parent = api.trace.setSpanContext(parent, producer.context);
    }
    const span: Span = tracer.startSpan(
      `process ${queue}`,
      {
        kind: api.SpanKind.CONSUMER,
        links,
        attributes: {
          'messaging.system': 'bullmq',
          'messaging.operation.type': 'process',
          'messaging.destination.name': queue,
          'messaging.message.id': job.id ?? '',
          'oa.queue': what,
          'oa.job.attempt': (job.attemptsMade ?? 0) + 1,
        },
      },
      parent,
    );
    try {
      const result = await api.context.with(api.trace.setSpan(parent, span), () => process(job, token));
      const state: JobState = what === 'outbox' ? 'delivered' : 'processed';
      span.setAttribute('oa.job.state', state);
      jobs?.add(1, { 'oa.job.state': state });
      return result;
    } catch (error) {
      const state = stateOf(job, error);
      span.setAttribute('oa.job.state', state);
      jobs?.add(1, { 'oa.job.state': state });
      failSpan(api, span, error);
      throw error;
    } finally {
      span.end();
    }
  };
}

/** The tracer of {@link inDeliveryTrace}, made on first use; its first fault is a process warning. */
let deliveryTracer: SafeTracer | undefined;
const deliveryFault = warnOnce('inbox');

/**
 * Runs `handle`, the handling of one inbox event of `order: 'sender'`, in the trace of the delivery that
 * stored it (`traceparent`, kept with the event): a turn drains its sender's later events too, and each
 * belongs to its own delivery's trace, not to the turn's. An event of the turn's own trace (or one kept
 * without a trace) runs as it is, under the turn's job span; another runs inside a CONSUMER span
 * `process <queue>` continuing its delivery's trace, linked to the turn's span.
 */
export async function inDeliveryTrace(
  queue: string,
  id: string,
  traceparent: string | undefined,
  handle: () => unknown,
): Promise<void> {
  const api = otelApi();
  const delivery = remoteContext(traceparent);
  if (!api || !delivery) {
    await handle();
    return;
  }
  const active = api.context.active();
  const turn = guarded(deliveryFault, () => api.trace.getSpanContext(active), undefined);
  if (turn?.traceId === delivery.traceId) {
    await handle();
    return;
  }
  deliveryTracer ??= containedTelemetry(api, deliveryFault).tracer;
  const parent = api.trace.setSpanContext(active, delivery);
  const span = deliveryTracer.startSpan(
    `process ${queue}`,
    {
      kind: api.SpanKind.CONSUMER,
      links: turn && api.trace.isSpanContextValid(turn) ? [{ context: turn }] : [],
      attributes: {
        'messaging.system': 'bullmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': queue,
        'messaging.message.id': id,
        'oa.queue': 'inbox',
      },
    },
    parent,
  );
  try {
    await api.context.with(api.trace.setSpan(parent, span), handle);
  } catch (error) {
    failSpan(api, span, error);
    throw error;
  } finally {
    span.end();
  }
}
