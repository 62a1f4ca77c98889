/**
 * What a client takes from Cloudflare's workerd (the `workerd` condition, which only workerd's bundlers
 * set): the global `fetch`, without what only Deno uses, which on workerd could never run.
 */
import { fetchTransport } from './runtime-web-base.js';
import type { DispatcherLike, Transport } from './transport.js';

export { runtime } from './runtime-web-base.js';

/**
 * The transport of a client given no `fetch`: the global `fetch` (a `dispatcher` is refused), whose
 * runtime pools and bounds its connections itself.
 */
export function defaultTransport(
  dispatcher: DispatcherLike | undefined,
  _proxyFromEnv: boolean,
  _connectionsPerOrigin?: number,
): Transport {
  return fetchTransport(dispatcher, () => ({}));
}
