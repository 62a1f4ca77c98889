/**
 * The check of the providers a client is given, on every runtime: off Node, where the runtime makes
 * no telemetry (and so bundles none of its code), a provider passed in is still checked and refused
 * with the same errors as on Node without `@opentelemetry/api`.
 */

import type { OAMeterProvider, OATracerProvider } from '../core/options.js';
import { OAConfigError } from '../errors.js';

/** Options naming other providers than the global ones. */
export interface TelemetryOptions {
  tracerProvider?: OATracerProvider | undefined;
  meterProvider?: OAMeterProvider | undefined;
  /** The client's OA account: the `oa.account` attribute of its spans (never a metric's: unbounded). */
  account?: string | undefined;
}

/** Whether providers were passed, having checked that each one passed is one. */
export function providersWanted({ tracerProvider, meterProvider }: TelemetryOptions): boolean {
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== 'function') {
    throw new OAConfigError('tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)');
  }
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function') {
    throw new OAConfigError('meterProvider must be an OpenTelemetry MeterProvider (with getMeter)');
  }
  return tracerProvider !== undefined || meterProvider !== undefined;
}

/** The refusal of providers where `@opentelemetry/api` cannot be loaded. */
export function apiMissing(): OAConfigError {
  return new OAConfigError(
    'tracerProvider and meterProvider need the @opentelemetry/api package: npm install @opentelemetry/api',
  );
}
