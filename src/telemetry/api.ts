/**
 * The types of `@opentelemetry/api`, an optional peer, as the package uses them: the API is loaded on
 * Node only (`node-api.ts`, given to the rest through `runtime.ts`).
 */
import type * as OTel from '@opentelemetry/api';

/** The API module, as this package uses it. */
export type OTelApi = typeof OTel;

/**
 * A tracer provider (`@opentelemetry/api`'s `TracerProvider`: the SDK's `NodeTracerProvider`,
 * `BasicTracerProvider`...), typed loosely so that the package's types need no `@opentelemetry/api`.
 */
export interface OATracerProvider {
  /** Returns the tracer of an instrumentation library. */
  getTracer(name: string, version?: string, options?: object): unknown;
}

/** A meter provider (`@opentelemetry/api`'s `MeterProvider`: the SDK's `MeterProvider`). */
export interface OAMeterProvider {
  /** Returns the meter of an instrumentation library. */
  getMeter(name: string, version?: string, options?: object): unknown;
}
