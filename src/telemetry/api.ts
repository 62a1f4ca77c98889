/**
 * `@opentelemetry/api`, an optional peer, loaded at most once and only when something could use it:
 * a provider passed in the options, or one registered globally. Without either, nothing is loaded and
 * the callers keep `undefined` (no tracing code runs on a call).
 */
import type * as OTel from '@opentelemetry/api';
import { platform } from '#platform';

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

/** Where `@opentelemetry/api` keeps its registered globals (trace, metrics, context, propagation). */
const GLOBAL = Symbol.for('opentelemetry.js.api.1');

/** `null`: tried and not installed. */
let loaded: OTelApi | null | undefined;

function load(): OTelApi | undefined {
  if (loaded === undefined) {
    try {
      // Synchronous, so that the first call is traced too (off Node there is no such loader).
      loaded = (platform.requireOpenTelemetry() as OTelApi | undefined) ?? null;
    } catch {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/**
 * The API when it is installed and a provider is in play: `wanted` (one passed in the options), else
 * one registered globally. `undefined` otherwise, having loaded nothing when nothing is registered.
 */
export function otelApi(wanted = false): OTelApi | undefined {
  if (!wanted && !(GLOBAL in globalThis)) return undefined;
  return load();
}
