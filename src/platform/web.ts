/**
 * The platform off Node (Bun, Deno, Workers, edge runtimes, browsers): the global `fetch`, the
 * runtime's `FormData`, files through `Bun.file` or `Deno`, and no Node built-in at all, so that a
 * Worker bundler has nothing to resolve that the runtime lacks. A bundle for workerd itself takes
 * `workerd.ts`, the same without Bun's and Deno's parts.
 */
import type { FetchTransportOptions } from '../core/fetch-transport.js';
import { allDistinct } from '../schemas/all-distinct.js';
import { webPathSource } from '../uploads/web-files.js';
import { webhookFastPath } from '../webhook/fast-path.js';
import type { Platform } from './types.js';
import { webPlatform } from './web-base.js';

/** Deno's HTTP client, as far as the transport uses it. */
interface DenoHttpClient {
  close(): void;
}

const runtime = globalThis as {
  Deno?: { createHttpClient?: (options: { poolMaxIdlePerHost?: number }) => DenoHttpClient };
};

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

export const platform: Platform = webPlatform({
  pathSource: webPathSource,
  transportOptions: denoSendsOnFreshConnections,
  webhookFastPath,
  allDistinct,
});
