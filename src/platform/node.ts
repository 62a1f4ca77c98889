/**
 * The platform on Node: undici, form-data streaming, node:fs, and `createRequire` for the optional
 * OpenTelemetry peer (in `telemetry/node-api.ts`, with the telemetry that uses it). The only place the
 * SDK's entry points reach Node built-ins from.
 */
import { UndiciTransport } from '../core/undici-transport.js';
import { allDistinct } from '../schemas/all-distinct.js';
import { clientTelemetry } from '../telemetry/client.js';
import { otelApi } from '../telemetry/node-api.js';
import { webhookTracing } from '../telemetry/webhook.js';
import { fileOfReadStream, nodeDetect, nodePathSource } from '../uploads/node-files.js';
import { nodeSha256 } from '../video/sha256-node.js';
import { webhookFastPath } from '../webhook/fast-path.js';
import { decodeWithZlib } from '../webhook/zlib-decoder.js';
import type { Platform } from './types.js';

export const platform: Platform = {
  runtime: () => `node/${process.version}`,
  defaultTransport: (dispatcher, proxyFromEnv) => new UndiciTransport(dispatcher, proxyFromEnv),
  pathSource: nodePathSource,
  fileOfStream: fileOfReadStream,
  detect: nodeDetect,
  otelApi,
  clientTelemetry,
  webhookTracing,
  decodeWithZlib,
  webhookFastPath,
  allDistinct,
  sha256: nodeSha256,
};
