/**
 * A webhook delivery's span and count: `oa webhook`, kind SERVER, one per request that reaches the
 * handler's core, parent of `onEvent` (so that an inbox job stored there, or a send made there, is in
 * its trace). Attributes: the callback command, the `MsgKey`, whether it was a duplicate and the status
 * answered; never the event's contents.
 */
import type { Counter, Span } from '@opentelemetry/api';
import type { Logger } from '../core/logger.js';
import type { OTelApi } from './api.js';
import { containedTelemetry, reportOnce, type SafeTracer } from './contain.js';
import { otelApi } from './node-api.js';

/** What the core tells of the delivery under way. */
export interface DeliveryNote {
  /** The event, once parsed: its command and `MsgKey` become attributes. */
  event(event: object): void;
  /** The event was a duplicate, answered without `onEvent`. */
  duplicate(): void;
}

interface Instruments {
  api: OTelApi;
  tracer: SafeTracer;
  deliveries: Pick<Counter, 'add'> | undefined;
}

/** The outcome a delivery is counted under, from the status answered. */
function outcomeOf(status: number, duplicate: boolean): string {
  if (status === 200) return duplicate ? 'duplicate' : 'processed';
  if (status === 401) return 'refused';
  if (status === 503) return 'busy';
  if (status >= 500) return 'failed';
  return 'rejected';
}

/**
 * Runs one delivery inside its span: `handle` gets the note to fill in. Without `@opentelemetry/api`
 * or a registered provider, `handle(undefined)` and nothing else (checked per request, so that a
 * provider registered after the handler was made is used; the API is loaded once). A tracer or meter
 * that throws changes no answer (see `contain.ts`); its first fault is logged through `logger` (`warn`).
 */
export function webhookTracing(
  logger: Logger = {},
): <R extends { status: number }>(handle: (note: DeliveryNote | undefined) => Promise<R>) => Promise<R> {
  let instruments: Instruments | undefined;
  const ready = (): Instruments | undefined => {
    if (instruments) return instruments;
    const api = otelApi();
    if (!api) return undefined;
    const fault = reportOnce('webhook', (message, details) => logger.warn?.(message, details));
    const { tracer, meter } = containedTelemetry(api, fault);
    instruments = {
      api,
      tracer,
      deliveries: meter?.createCounter('oa.webhook.deliveries', {
        description: 'Webhook deliveries, by outcome',
        unit: '{delivery}',
      }),
    };
    return instruments;
  };
  const spanned = async <R extends { status: number }>(
    on: Instruments,
    handle: (note: DeliveryNote | undefined) => Promise<R>,
  ): Promise<R> => {
    const { api, tracer, deliveries } = on;
    const active = api.context.active();
    const span: Span = tracer.startSpan('oa webhook', { kind: api.SpanKind.SERVER }, active);
    let duplicate = false;
    const note: DeliveryNote = {
      event(parsed) {
        const event = parsed as {
          event_type?: unknown;
          data?: { CallbackCommand?: unknown; MsgKey?: unknown };
        };
        if (typeof event.event_type === 'string') span.setAttribute('oa.webhook.event', event.event_type);
        const data = typeof event.data === 'object' && event.data !== null ? event.data : {};
        if (typeof data.CallbackCommand === 'string')
          span.setAttribute('oa.webhook.command', data.CallbackCommand);
        const key = data.MsgKey;
        if (typeof key === 'string' || typeof key === 'number') span.setAttribute('oa.msg_key', String(key));
      },
      duplicate() {
        duplicate = true;
      },
    };
    try {
      const result = await api.context.with(api.trace.setSpan(active, span), () => handle(note));
      span.setAttribute('oa.duplicate', duplicate);
      span.setAttribute('http.response.status_code', result.status);
      if (result.status >= 500) {
        span.setAttribute('error.type', String(result.status));
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
      deliveries?.add(1, {
        'oa.webhook.outcome': outcomeOf(result.status, duplicate),
        'http.response.status_code': result.status,
      });
      return result;
    } finally {
      span.end();
    }
  };
  // Without tracing, `handle`'s own promise: no wrapper on the way of every delivery.
  return (handle) => {
    const on = ready();
    return on ? spanned(on, handle) : handle(undefined);
  };
}
