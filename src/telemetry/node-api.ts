/**
 * `@opentelemetry/api`, an optional peer, loaded at most once and only when something could use it:
 * a provider passed in the options, or one registered globally. Without either, nothing is loaded and
 * the callers keep `undefined` (no tracing code runs on a call). Node only: off Node the runtime has
 * no API to give (`runtime-web.ts`).
 */
import { createRequire } from 'node:module';
import type { OTelApi } from './api.js';

/** Where `@opentelemetry/api` keeps its registered globals (trace, metrics, context, propagation). */
const GLOBAL = Symbol.for('opentelemetry.js.api.1');

/** `null`: tried and not installed. */
let loaded: OTelApi | null | undefined;

function load(): OTelApi | undefined {
  if (loaded === undefined) {
    try {
      // Synchronous, so that the first call is traced too; the build gives CommonJS its import.meta.url.
      loaded = createRequire(import.meta.url)('@opentelemetry/api') as OTelApi;
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
