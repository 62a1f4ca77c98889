/**
 * What is kept for one OA: its token pair (and the one renewal of it) and its rate limiter. It belongs
 * to the OA that earned it, its base URL and api key ({@link oaKey}), never to a name given to the
 * account: an account id whose credentials now name another OA starts clean, and every route to one OA
 * (an account's client, a plain client, the `oa` command, another process sharing a coordination)
 * uses one token pair and one quota. The ready video tickets and the upload answers are keyed the same
 * way (by the client's `stateKey`).
 */
import type { TokenPair } from '../schemas/responses.js';
import { TokenManager, type TokenStore } from './auth.js';
import type { ClientEvents } from './events.js';
import type { Logger } from './logger.js';
import type { Coordination } from './options.js';
import { type Limiter, type Permit, RateLimiter, type RateLimits } from './rate-limit.js';

/**
 * The key of what is kept for the OA at `baseUrl` that `apiKey` logs in to: `<apiKey>@<base URL>`. The
 * base URL is taken without query or fragment, as the client sends to it; URLs escape `{`, `}` and
 * spaces in a path, so the key is safe inside a Redis Cluster hash tag whenever the api key is.
 * @example oaKey(new URL('https://oa.example.com'), 'key-1') === 'key-1@https://oa.example.com/'
 */
export function oaKey(baseUrl: URL, apiKey: string): string {
  return `${apiKey}@${baseUrl.origin}${baseUrl.pathname}`;
}

/** What a state asks of the client that uses it: its token endpoints, its events. */
export interface StateUser {
  /** Endpoint 1 with the client's credentials, for the state `key` (refused if they name another OA). */
  login(slot: Permit | undefined, key: string): Promise<TokenPair>;
  /** Endpoint 2, likewise. */
  refresh(refresh_token: string, slot: Permit | undefined, key: string): Promise<TokenPair>;
  readonly events: ClientEvents;
}

/** What is kept for one OA (see the file's comment). */
export interface OAState {
  /** {@link oaKey} of the OA. */
  readonly key: string;
  readonly limiter: Limiter | undefined;
  readonly tokens: TokenManager;
  /**
   * The client whose credentials renew the token: the last that chose this state (several clients may
   * share it: an account's client dropped beyond `maxClients` and still held, and its successor).
   */
  user: StateUser;
}

/** What a state is made from: the clients' options as resolved. */
export interface StateOptions {
  readonly coordination: Coordination | undefined;
  readonly tokenStore: TokenStore;
  readonly rateLimit: RateLimits | false;
  readonly refreshBeforeExpiryMs: number;
  readonly logger: Logger;
}

/** A new state for the OA `key`, renewed through `user` (see {@link OAState.user}). */
export function makeState(key: string, options: StateOptions, user: StateUser): OAState {
  const { coordination, rateLimit } = options;
  const state: OAState = {
    key,
    // No limiter starts a timer before its first request.
    limiter: rateLimit
      ? (coordination?.createLimiter(key, rateLimit) ?? new RateLimiter(rateLimit))
      : undefined,
    user,
    tokens: new TokenManager({
      store: coordination?.tokenStore ?? options.tokenStore,
      lock: coordination,
      key,
      endpoints: {
        login: (slot) => state.user.login(slot, key),
        refresh: (token, slot) => state.user.refresh(token, slot, key),
      },
      refreshBeforeExpiryMs: options.refreshBeforeExpiryMs,
      logger: options.logger,
      events: { emit: (name, event) => state.user.events.emit(name, event) },
    }),
  };
  return state;
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
  readonly #gone = new FinalizationRegistry<string>((key) => {
    if (this.#states.get(key)?.deref() === undefined) this.#states.delete(key);
  });

  constructor(options: StateOptions) {
    this.#options = options;
  }

  /** The state of the OA `key`, made for `user` when no client holds it; `user` renews it from now on. */
  of(key: string, user: StateUser): OAState {
    const held = this.#states.get(key)?.deref();
    if (held) {
      held.user = user;
      return held;
    }
    const state = makeState(key, this.#options, user);
    this.#states.set(key, new WeakRef(state));
    this.#gone.register(state, key);
    return state;
  }

  /** Stops every state's limiter (`accounts.close()`). */
  close(): void {
    for (const ref of this.#states.values()) ref.deref()?.limiter?.stop();
    this.#states.clear();
  }
}
