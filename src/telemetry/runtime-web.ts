/**
 * Telemetry off Node (Bun, Deno, Workers, edge runtimes, browsers; package.json `imports`:
 * `#telemetry-runtime`): none. There is no synchronous loader of `@opentelemetry/api` here (tracing
 * needs Node, or Bun through the Node entry), so no tracing code is bundled; providers passed to a
 * client are still checked, and refused.
 */
import { OAConfigError } from '../errors.js';
import type { OTelApi } from './api.js';
import type { clientTelemetry as tracedClient } from './client.js';
import { providersWanted } from './providers.js';
import type { webhookTracing as tracedWebhook } from './webhook.js';

/** No API to give off Node. */
export function otelApi(_wanted?: boolean): OTelApi | undefined {
  return undefined;
}

/**
 * No telemetry to make: providers passed are refused, not ignored, and installing @opentelemetry/api
 * would not help here, so the error does not suggest it.
 */
export const clientTelemetry: typeof tracedClient = (options) => {
  if (providersWanted(options)) {
    throw new OAConfigError(
      'tracerProvider and meterProvider work on Node only: on this runtime the SDK does not trace or measure',
    );
  }
  return undefined;
};

/** No span per delivery: the delivery is handled as it is. */
export const webhookTracing: typeof tracedWebhook = () => (handle) => handle(undefined);
