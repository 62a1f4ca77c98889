/**
 * What every platform off Node shares: the global `fetch`, the SDK's own format signatures, and no
 * tracing, zlib or Node built-in. `web.ts` adds files and connections of Bun and Deno; `workerd.ts`,
 * for a runtime known to have neither, leaves their code out of a Worker's bundle.
 */
import { FetchTransport, type FetchTransportOptions, globalFetch } from '../core/fetch-transport.js';
import { OAConfigError } from '../errors.js';
import { providersWanted } from '../telemetry/providers.js';
import { detectWeb } from '../uploads/signatures.js';
import { webSha256 } from '../video/sha256-web.js';
import { UNSUPPORTED } from '../webhook/encoding.js';
import type { Platform } from './types.js';

const runtime = globalThis as {
  Bun?: { version: string };
  Deno?: { version: { deno: string } };
  EdgeRuntime?: string;
  navigator?: { userAgent?: string };
};

function runtimeName(): string {
  if (runtime.Bun) return `bun/${runtime.Bun.version}`;
  if (runtime.Deno) return `deno/${runtime.Deno.version.deno}`;
  if (runtime.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof runtime.EdgeRuntime === 'string') return runtime.EdgeRuntime;
  return 'web';
}

/**
 * What differs between the platforms off Node: how a path is read, the transport's options, whether
 * webhooks are read with the fast path, and how a `user_ids` list is checked for repeats.
 */
export interface WebParts {
  pathSource: Platform['pathSource'];
  /** The options of a client's own transport (made when a client is). */
  transportOptions: () => FetchTransportOptions;
  webhookFastPath: Platform['webhookFastPath'];
  allDistinct: Platform['allDistinct'];
}

/** A platform off Node with its `parts`. */
export function webPlatform({
  pathSource,
  transportOptions,
  webhookFastPath,
  allDistinct,
}: WebParts): Platform {
  return {
    runtime: runtimeName,
    defaultTransport: (dispatcher) => {
      if (dispatcher !== undefined) {
        throw new OAConfigError(
          'dispatcher is an undici Dispatcher, which this runtime does not send with: pass fetch instead',
        );
      }
      return new FetchTransport(globalFetch(), transportOptions());
    },
    pathSource,
    // Only Node's fs.ReadStream names its file; Bun's copy of it is not worth a file system call here.
    fileOfStream: async () => undefined,
    // file-type's tokenizer pulls Node-only packages into a Worker bundle.
    detect: detectWeb,
    // No synchronous loader off Node: tracing needs Node (or Bun through the Node entry).
    otelApi: () => undefined,
    // Without the API there is no telemetry to make: providers passed are refused, not ignored, and
    // installing @opentelemetry/api would not help here, so the error does not suggest it.
    clientTelemetry: (options) => {
      if (providersWanted(options)) {
        throw new OAConfigError(
          'tracerProvider and meterProvider work on Node only: on this runtime the SDK does not trace or measure',
        );
      }
      return undefined;
    },
    webhookTracing: () => (handle) => handle(undefined),
    // DecompressionStream covers gzip and deflate; br is refused off Node.
    decodeWithZlib: async () => UNSUPPORTED,
    webhookFastPath,
    allDistinct,
    sha256: webSha256,
  };
}
