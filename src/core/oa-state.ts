/**
 * What is kept for one OA: its token pair (and the one renewal of it) and its rate limiter. It belongs
 * to the OA that earned it, its base URL and api key ({@link oaKey}), never to a name given to the
 * account: an account id whose credentials now name another OA starts clean, and every route to one OA
 * (an account's client, a plain client, the `oa` command, another process sharing a coordination)
 * uses one token pair and one quota. The ready video tickets and the upload answers are keyed the same
 * way (by the client's `stateKey`).
 */
import { TokenManager, type TokenStore } from './auth.js';
import type { Logger } from './logger.js';
import type { Coordination } from './options.js';
import { type Limiter, RateLimiter, type RateLimits } from './rate-limit.js';

/**
 * The key of what is kept for the OA at `baseUrl` that `apiKey` logs in to: `<apiKey>@<base URL>`. The
 * base URL is taken without query or fragment, as the client sends to it; URLs escape `{`, `}` and
 * spaces in a path, so the key is safe inside a Redis Cluster hash tag whenever the api key is.
 * @example oaKey(new URL('https://oa.example.com'), 'key-1') === 'key-1@https://oa.example.com/'
 */
export function oaKey(baseUrl: URL, apiKey: string): string {
  return `${apiKey}@${baseUrl.origin}${baseUrl.pathname}`;
}

/** What is kept for one OA (see the file's comment). */
export interface OAState {
  /** {@link oaKey} of the OA. */
  readonly key: string;
  readonly limiter: Limiter | undefined;
  /** Its token pair; a renewal is run by the client whose call needs it, with its own credentials. */
  readonly tokens: TokenManager;
}

/** What a state is made from: the clients' options as resolved. */
export interface StateOptions {
  readonly coordination: Coordination | undefined;
  readonly tokenStore: TokenStore;
  readonly rateLimit: RateLimits | false;
  readonly refreshBeforeExpiryMs: number;
  readonly logger: Logger;
}

/** A new state for the OA `key`. */
export function makeState(key: string, options: StateOptions): OAState {
  const { coordination, rateLimit } = options;
  return {
    key,
    // No limiter starts a timer before its first request.
    limiter: rateLimit
      ? (coordination?.createLimiter(key, rateLimit) ?? new RateLimiter(rateLimit))
      : undefined,
    tokens: new TokenManager({
      store: coordination?.tokenStore ?? options.tokenStore,
      lock: coordination,
      key,
      refreshBeforeExpiryMs: options.refreshBeforeExpiryMs,
      logger: options.logger,
    }),
  };
}

/**
 * The states of the accounts of one `createAccounts`, one per OA while any client uses it: held
 * weakly, so that a client dropped beyond `maxClients` and still held by a caller and the account's
 * next client share one token renewal and one limiter, and a state no client holds any more goes with
 * its last client.
 */
export class OAStates {
  readonly #options: StateOptions;
  readonly #states = new Map<string, WeakRef<OAState>>();
  /**
   * A state no client holds any more: its entry goes, and its limiter is stopped (a coordination keeps
   * each limiter it made until then), so that states made again and again for accounts beyond
   * `maxClients` leave nothing behind.
   */
  readonly #gone = new FinalizationRegistry<{ key: string; limiter: Limiter | undefined }>((gone) => {
    if (this.#states.get(gone.key)?.deref() === undefined) this.#states.delete(gone.key);
    gone.limiter?.stop();
  });

  constructor(options: StateOptions) {
    this.#options = options;
  }

  /** The state of the OA `key`: the one a client holds, else a new one. */
  of(key: string): OAState {
    const held = this.#states.get(key)?.deref();
    if (held) return held;
    const state = makeState(key, this.#options);
    this.#states.set(key, new WeakRef(state));
    this.#gone.register(state, { key, limiter: state.limiter });
    return state;
  }

  /** Stops every state's limiter (`accounts.close()`). */
  close(): void {
    for (const ref of this.#states.values()) ref.deref()?.limiter?.stop();
    this.#states.clear();
  }
}
