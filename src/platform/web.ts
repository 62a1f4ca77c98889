/**
 * The platform off Node (Bun, Deno, Cloudflare Workers, edge runtimes, browsers): the global `fetch`,
 * the runtime's `FormData`, files through `Bun.file` or `Deno`, and no Node built-in at all, so that a
 * Worker bundler has nothing to resolve that the runtime lacks.
 */
import { FetchTransport, type FetchTransportOptions, globalFetch } from '../core/fetch-transport.js';
import { OAConfigError } from '../errors.js';
import { apiMissing, providersWanted } from '../telemetry/providers.js';
import { detectWeb } from '../uploads/signatures.js';
import { webPathSource } from '../uploads/web-files.js';
import { UNSUPPORTED } from '../webhook/encoding.js';
import type { Platform } from './types.js';

/** Deno's HTTP client, as far as the transport uses it. */
interface DenoHttpClient {
  close(): void;
}

const runtime = globalThis as {
  Bun?: { version: string };
  Deno?: {
    version: { deno: string };
    createHttpClient?: (options: { poolMaxIdlePerHost?: number }) => DenoHttpClient;
  };
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
 * On Deno, each send goes on a connection of its own. Deno's fetch sends a request again, once, when a
 * connection it took from its pool fails before the answer (it takes that for a stale keep-alive
 * connection), even when the server had read the request and acted on it: a message could be
 * delivered twice. A connection that was never pooled is not retried that way. Token requests and
 * uploads, which are safe to repeat, keep the pooled connections.
 */
function denoSendsOnFreshConnections(): FetchTransportOptions {
  const create = runtime.Deno?.createHttpClient;
  if (typeof create !== 'function') return {};
  let client: DenoHttpClient | undefined;
  return {
    get sendInit() {
      client ??= create.call(runtime.Deno, { poolMaxIdlePerHost: 0 });
      return { client };
    },
    close: () => client?.close(),
  };
}

export const platform: Platform = {
  runtime: runtimeName,
  defaultTransport: (dispatcher) => {
    if (dispatcher !== undefined) {
      throw new OAConfigError(
        'dispatcher is an undici Dispatcher, which this runtime does not send with: pass fetch instead',
      );
    }
    return new FetchTransport(globalFetch(), denoSendsOnFreshConnections());
  },
  pathSource: webPathSource,
  // Only Node's fs.ReadStream names its file; Bun's copy of it is not worth a file system call here.
  fileOfStream: async () => undefined,
  // file-type's tokenizer pulls Node-only packages into a Worker bundle.
  detect: detectWeb,
  // No synchronous loader off Node: tracing needs Node (or Bun through the Node entry).
  otelApi: () => undefined,
  // Without the API there is no telemetry to make; providers passed are refused as on Node without it.
  clientTelemetry: (options) => {
    if (providersWanted(options)) throw apiMissing();
    return undefined;
  },
  webhookTracing: () => (handle) => handle(undefined),
  // DecompressionStream covers gzip and deflate; br is refused off Node.
  decodeWithZlib: async () => UNSUPPORTED,
};
