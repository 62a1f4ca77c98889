/**
 * Telemetry on Node (package.json `imports`: `#telemetry-runtime` under the `node` condition):
 * `@opentelemetry/api`, an optional peer, loaded synchronously through `createRequire`, and the
 * client's and the webhook handlers' tracing built on it.
 */
export { clientTelemetry } from './client.js';
export { otelApi } from './node-api.js';
export { webhookTracing } from './webhook.js';
