/**
 * What the runtimes off Node share for a client: their name, and the global `fetch` as its transport.
 * `runtime-web.ts` adds Deno's connections; `runtime-workerd.ts`, for a runtime known to have none,
 * leaves that code out of a Worker's bundle.
 */
import { OAConfigError } from '../errors.js';
import { FetchTransport, type FetchTransportOptions, globalFetch } from './fetch-transport.js';
import type { DispatcherLike, Transport } from './transport.js';

const host = globalThis as {
  Bun?: { version: string };
  Deno?: { version: { deno: string } };
  EdgeRuntime?: string;
  navigator?: { userAgent?: string };
};

/** The runtime and its version, as the User-Agent names it: `bun/1.2.3`, `deno/2.1.0`, `workerd`. */
export function runtime(): string {
  if (host.Bun) return `bun/${host.Bun.version}`;
  if (host.Deno) return `deno/${host.Deno.version.deno}`;
  if (host.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof host.EdgeRuntime === 'string') return host.EdgeRuntime;
  return 'web';
}

/**
 * The transport of a client given no `fetch`: the global `fetch`, with the runtime's `options` (made
 * when a client is). A `dispatcher` is refused: it is undici's.
 */
export function fetchTransport(
  dispatcher: DispatcherLike | undefined,
  options: () => FetchTransportOptions,
): Transport {
  if (dispatcher !== undefined) {
    throw new OAConfigError(
      'dispatcher is an undici Dispatcher, which this runtime does not send with: pass fetch instead',
    );
  }
  return new FetchTransport(globalFetch(), options());
}
