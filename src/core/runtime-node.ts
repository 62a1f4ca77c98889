/**
 * What a client takes from Node (package.json `imports`: `#core-runtime` under the `node` condition):
 * undici as its transport, and the runtime's name for the User-Agent.
 */
import type { DispatcherLike, Transport } from './transport.js';
import { UndiciTransport } from './undici-transport.js';

/** The runtime and its version, as the User-Agent names it: `node/v20.19.0`. */
export function runtime(): string {
  return `node/${process.version}`;
}

/**
 * The transport of a client given no `fetch`: undici, with the caller's `dispatcher`, else its own,
 * keeping at most `connectionsPerOrigin` sockets per origin when given (the pool `createAccounts`
 * shares), else as many as its requests in flight.
 */
export function defaultTransport(
  dispatcher: DispatcherLike | undefined,
  proxyFromEnv: boolean,
  connectionsPerOrigin?: number,
): Transport {
  return new UndiciTransport(dispatcher, proxyFromEnv, connectionsPerOrigin);
}
