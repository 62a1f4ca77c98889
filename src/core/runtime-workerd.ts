/**
 * What a client takes from Cloudflare's workerd (the `workerd` condition, which only workerd's bundlers
 * set): the global `fetch`, without what only Deno uses, which on workerd could never run.
 */
import { fetchTransport } from './runtime-web-base.js';
import type { DispatcherLike, Transport } from './transport.js';

export { runtime } from './runtime-web-base.js';

/** The transport of a client given no `fetch`: the global `fetch` (a `dispatcher` is refused). */
export function defaultTransport(dispatcher: DispatcherLike | undefined, _proxyFromEnv: boolean): Transport {
  return fetchTransport(dispatcher, () => ({}));
}
