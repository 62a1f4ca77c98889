/**
 * The connection pool the clients of many accounts share. On Node, one undici dispatcher (the one a
 * plain client would make for itself, pooling connections per origin) for every client that was given
 * none; elsewhere there is nothing to share: the global `fetch` pools already.
 */
import { defaultTransport } from '#core-runtime';
import { proxyFromEnv } from './options.js';
import type { DispatcherLike, Transport } from './transport.js';

/** The default transport on Node, which makes its dispatcher on first use (undici loaded then). */
interface DispatchingTransport extends Transport {
  dispatcher(): DispatcherLike | Promise<DispatcherLike>;
}

const dispatches = (transport: Transport): transport is DispatchingTransport =>
  typeof (transport as Partial<DispatchingTransport>).dispatcher === 'function';

export class SharedPool {
  readonly #transport: Transport;
  #dispatcher: DispatcherLike | undefined;
  /** undici loaded and the dispatcher made; `undefined` off Node. */
  readonly #ready: Promise<DispatcherLike> | undefined;
  /** Hands requests to the dispatcher for clients made before it was ready (see {@link dispatcher}). */
  readonly #early: DispatcherLike;

  constructor() {
    this.#transport = defaultTransport(undefined, proxyFromEnv());
    const transport = this.#transport;
    this.#early = {
      dispatch: (options, handler) => {
        // Every account's first request follows its credentials, which wait for `ready()`.
        if (!this.#dispatcher) throw new Error('the shared connection pool is still loading');
        return this.#dispatcher.dispatch(options, handler);
      },
    };
    if (dispatches(transport)) {
      this.#ready = Promise.resolve(transport.dispatcher()).then((made) => {
        this.#dispatcher = made;
        return made;
      });
      // Awaited by every first login; a failure to load undici shows there.
      this.#ready.catch(() => {});
    }
  }

  /**
   * The `dispatcher` option of a new account's client: the shared dispatcher itself once it is made,
   * else a stand-in that hands it every request; `undefined` where the global `fetch` pools.
   */
  get dispatcher(): DispatcherLike | undefined {
    if (!this.#ready) return undefined;
    return this.#dispatcher ?? this.#early;
  }

  /** Resolves once the shared dispatcher can take requests. */
  ready(): Promise<unknown> | undefined {
    return this.#ready;
  }

  /** Closes the shared sockets. */
  close(): Promise<void> {
    return this.#transport.close();
  }
}
