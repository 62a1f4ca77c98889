/**
 * The platform on Node: undici, form-data streaming, node:fs, and `createRequire` for the optional
 * OpenTelemetry peer. The only place the SDK's entry points reach Node built-ins from.
 */
import { createRequire } from 'node:module';
import { UndiciTransport } from '../core/undici-transport.js';
import { clientTelemetry } from '../telemetry/client.js';
import { webhookTracing } from '../telemetry/webhook.js';
import { fileOfReadStream, nodeDetect, nodePathSource } from '../uploads/node-files.js';
import type { Platform } from './types.js';

export const platform: Platform = {
  runtime: () => `node/${process.version}`,
  defaultTransport: (dispatcher, proxyFromEnv) => new UndiciTransport(dispatcher, proxyFromEnv),
  pathSource: nodePathSource,
  fileOfStream: fileOfReadStream,
  detect: nodeDetect,
  // Synchronous, so that the first call is traced too; the build gives CommonJS its import.meta.url.
  requireOpenTelemetry: () => createRequire(import.meta.url)('@opentelemetry/api'),
  clientTelemetry,
  webhookTracing,
  zlib: () => import('node:zlib'),
};
