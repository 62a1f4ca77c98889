/**
 * What a client takes from a runtime off Node (Bun, Deno, Workers, edge runtimes, browsers; package.json
 * `imports`: `#core-runtime`): the global `fetch`, on Deno with a connection of its own for each send.
 * A bundle for workerd takes `runtime-workerd.ts`, the same without Deno's part.
 */
import type { FetchTransportOptions } from './fetch-transport.js';
import { fetchTransport } from './runtime-web-base.js';
import type { DispatcherLike, Transport } from './transport.js';

export { runtime } from './runtime-web-base.js';

/** Deno's HTTP client, as far as the transport uses it. */
interface DenoHttpClient {
  close(): void;
}

const host = globalThis as {
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
  const create = host.Deno?.createHttpClient;
  if (typeof create !== 'function') return {};
  let client: DenoHttpClient | undefined;
  return {
    get sendInit() {
      client ??= create.call(host.Deno, { poolMaxIdlePerHost: 0 });
      return { client };
    },
    close: () => client?.close(),
  };
}

/**
 * The transport of a client given no `fetch`: the global `fetch` (a `dispatcher` is refused), whose
 * runtime pools and bounds its connections itself.
 */
export function defaultTransport(
  dispatcher: DispatcherLike | undefined,
  _proxyFromEnv: boolean,
  _connectionsPerOrigin?: number,
): Transport {
  return fetchTransport(dispatcher, denoSendsOnFreshConnections);
}
