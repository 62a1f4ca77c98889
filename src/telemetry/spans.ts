/**
 * What every span of the package shares: its instrumentation scope, and how a failure is recorded on
 * a span. Apart from the client's telemetry, so that the queue's job spans, which run off Node too,
 * do not bring Node's loader of the API with them.
 */
import type { Span } from '@opentelemetry/api';
import type { OTelApi } from './api.js';

/** The instrumentation scope of every tracer and meter of the package. */
export const SCOPE = 'oa-messaging';

/** A safe description of a failure: its class, status and API code, never its message. */
export function errorSummary(error: unknown): { type: string; message: string } {
  const e = error as { name?: unknown; status?: unknown; code?: unknown } | null;
  const type = typeof e?.name === 'string' ? e.name : 'Error';
  const status = typeof e?.status === 'number' ? ` ${e.status}` : '';
  const code = typeof e?.code === 'string' ? ` ${e.code}` : '';
  return { type, message: `${type}${status}${code}` };
}

/** Marks `span` failed with `error`, recorded by class, status and code only. */
export function failSpan(api: OTelApi, span: Span, error: unknown): void {
  const { type, message } = errorSummary(error);
  span.setAttribute('error.type', type);
  span.recordException({ name: type, message });
  span.setStatus({ code: api.SpanStatusCode.ERROR, message });
}
