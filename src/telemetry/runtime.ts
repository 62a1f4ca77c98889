/**
 * The telemetry of the runtime the package runs on, chosen by package.json `imports`
 * (`#telemetry-runtime`): on Node the API's loader and the client's and webhooks' tracing
 * (`runtime-node.ts`), elsewhere none (`runtime-web.ts`), so that a Worker bundles no tracing code.
 */
export { clientTelemetry, otelApi, webhookTracing } from '#telemetry-runtime';
