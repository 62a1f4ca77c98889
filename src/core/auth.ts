/**
 * The access token: the pair the client holds, where it is stored, and the one renewal (refresh, else
 * login) shared by every call that needs a fresh token.
 */
import { OAApiError, OARateLimitError, OAUnauthorizedError } from '../errors.js';
import type { TokenPair } from '../schemas/responses.js';
import { DOCUMENTED_LIFETIME_MS, jwtLifetimeSeconds, parseExpiresIn } from '../schemas/token-lifetime.js';
import type { ClientEvents } from './events.js';
import type { Logger } from './logger.js';
import type { Permit, SlotLoan } from './rate-limit.js';

/** A token pair as the SDK keeps it. */
export interface StoredToken {
  /** The bearer token (a JWT). */
  access_token: string;
  /** The refresh token; `''` when the answer carried none (the client then logs in again instead). */
  refresh_token: string;
  /** `Bearer`. */
  token_type: string;
  /** When the access token was obtained, ms since the epoch. */
  obtained_at: number;
  /** When the access token expires, ms since the epoch. */
  expires_at: number;
}

/**
 * Where the client keeps its token pair, keyed by OA (its base URL and api key). The default keeps it in memory; a shared
 * store (for example `oa-messaging/redis`) lets many processes use one pair.
 */
export interface TokenStore {
  /** The token pair kept for `key`, if any. */
  get(key: string): Promise<StoredToken | undefined> | StoredToken | undefined;
  /** Keeps `token` for `key`. */
  set(key: string, token: StoredToken): Promise<void> | void;
  /** Forgets the pair kept for `key`. */
  delete(key: string): Promise<void> | void;
}

/** The default {@link TokenStore}: one process, in memory. */
export class MemoryTokenStore implements TokenStore {
  readonly #tokens = new Map<string, StoredToken>();

  get(key: string): StoredToken | undefined {
    return this.#tokens.get(key);
  }

  set(key: string, token: StoredToken): void {
    this.#tokens.set(key, token);
  }

  delete(key: string): void {
    this.#tokens.delete(key);
  }
}

/**
 * When a fresh pair expires, on this machine's clock: its lifetime is measured from its receipt, as
 * `exp - iat` when the JWT has both (a difference, whatever the server's clock says), else
 * `expires_in`, else the documented hour. `exp` alone is never compared with our clock: a server
 * whose clock is behind would make every pair look expired on arrival, and renewed before every call.
 */
function toStoredToken(pair: TokenPair, now: number): StoredToken {
  const jwtSeconds = jwtLifetimeSeconds(pair.access_token);
  const lifetimeMs =
    jwtSeconds !== undefined
      ? jwtSeconds * 1000
      : (parseExpiresIn(pair.expires_in) ?? DOCUMENTED_LIFETIME_MS);
  return {
    access_token: pair.access_token,
    refresh_token: pair.refresh_token,
    token_type: pair.token_type,
    obtained_at: now,
    expires_at: now + lifetimeMs,
  };
}

/**
 * Who runs a renewal: the client whose call needs it (several clients may share one OA's token), with
 * the two token endpoints as the pipeline runs them (one exchange each, no retry loop of their own), for
 * the token of `key`, and its events.
 */
export interface Renewer {
  /**
   * Endpoint 1 with the client's credentials: one request, straight to the transport, in `slot` when
   * one is lent (else it takes one of its own). Refused (not sent) when they no longer name `key`'s OA.
   */
  login(slot: Permit | undefined, key: string): Promise<TokenPair>;
  /** Endpoint 2, the same way. */
  refresh(refresh_token: string, slot: Permit | undefined, key: string): Promise<TokenPair>;
  /** Told of each pair obtained by a renewal (`tokenRefresh`), and why the renewal ran. */
  readonly events: Pick<ClientEvents, 'emit'>;
}

export interface TokenManagerDeps {
  store: TokenStore;
  /** The store key: one pair per OA (its `oaKey`, base URL and api key). */
  key: string;
  /** Refresh this long before expiry (at most half the token's lifetime). */
  refreshBeforeExpiryMs: number;
  logger: Logger;
  /**
   * Runs a renewal under a lock shared with other processes (`coordination`); without it, renewals
   * are single-flight within this process only.
   */
  lock?: { withRenewalLock<T>(key: string, renew: () => Promise<T>): Promise<T> } | undefined;
  now?: () => number;
}

/** Why the client renewed its token: it had none, it was close to expiry, or the API refused it. */
export type RenewalReason = 'no_token' | 'expiring' | 'rejected';

/**
 * Keeps a valid access token for the client's calls. Renewals are single-flight: however many calls
 * find the token stale or get a 401 at once, one refresh (or login) runs and they all share it.
 */
export class TokenManager {
  readonly #deps: TokenManagerDeps;
  readonly #now: () => number;
  #renewal: Promise<StoredToken> | undefined;
  /**
   * The last pair this process saw (read, obtained or saved): the token of every call while it is
   * fresh, and what messages and logs are scrubbed of.
   */
  #lastSeen: StoredToken | undefined;
  /** The last access token a 401 refused: never handed out again, however fresh it looks. */
  #refused: string | undefined;
  /**
   * Slots lent by the calls waiting for the current renewal: its login or refresh takes one, and a
   * refused refresh's login takes the next, so that it never queues behind calls holding every slot.
   */
  #loans: SlotLoan[] = [];

  constructor(deps: TokenManagerDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** Whether renewals are shared with other processes (a coordination's lock). */
  get shared(): boolean {
    return this.#deps.lock !== undefined;
  }

  /**
   * The access token of the pair this process holds, while it is fresh: no promise and no trip to the
   * store (a shared store is a network round trip). `undefined` when there is none or it is stale:
   * then {@link renewed}.
   */
  current(): string | undefined {
    const held = this.#lastSeen;
    return held && held.access_token !== this.#refused && !this.#isStale(held)
      ? held.access_token
      : undefined;
  }

  /**
   * A fresh access token from the store (another call or process may have renewed), else from one
   * renewal shared by every call that needs it, run by `by` (the client of the call that starts it).
   * With `rejected` (the token a 401 refused), a token other than that one.
   */
  async renewed(by: Renewer, rejected?: string, loan?: SlotLoan): Promise<string> {
    if (rejected !== undefined) this.#refused = rejected;
    const current = await this.#read();
    const usable = current && current.access_token !== this.#refused && !this.#isStale(current);
    if (usable) return current.access_token;
    const reason: RenewalReason = rejected !== undefined ? 'rejected' : current ? 'expiring' : 'no_token';
    return (await this.#renew(by, current, reason, loan)).access_token;
  }

  /** The credentials of the last pair seen, for scrubbing. */
  knownSecrets(): string[] {
    return this.#lastSeen ? [this.#lastSeen.access_token, this.#lastSeen.refresh_token] : [];
  }

  /** Keeps a pair obtained by the caller's own `generateToken()` or `refreshToken()`. */
  async save(pair: TokenPair): Promise<StoredToken> {
    const stored = toStoredToken(pair, this.#now());
    this.#lastSeen = stored;
    await this.#deps.store.set(this.#deps.key, stored);
    return stored;
  }

  async #read(): Promise<StoredToken | undefined> {
    const stored = await this.#deps.store.get(this.#deps.key);
    if (stored) this.#lastSeen = stored;
    return stored;
  }

  /** The stored refresh token, if any: `undefined` too when the answer that gave the pair had none (`''`). */
  async currentRefreshToken(): Promise<string | undefined> {
    return (await this.#read())?.refresh_token || undefined;
  }

  #isStale(token: StoredToken): boolean {
    const lifetime = token.expires_at - token.obtained_at;
    const margin = Math.min(this.#deps.refreshBeforeExpiryMs, Math.max(0, lifetime / 2));
    return this.#now() >= token.expires_at - margin;
  }

  /** One renewal at a time; the call that starts it lends it its rate-limit slot (`loan`). */
  #renew(
    by: Renewer,
    current: StoredToken | undefined,
    reason: RenewalReason,
    loan?: SlotLoan,
  ): Promise<StoredToken> {
    if (loan) this.#loans.push(loan);
    if (!this.#renewal) {
      this.#renewal = this.#doRenew(by, current, reason).finally(() => {
        this.#renewal = undefined;
        this.#loans = [];
      });
      // Shared: every caller may have given up (aborted) by the time it settles.
      this.#renewal.catch(() => {});
    }
    return this.#renewal;
  }

  /** A slot lent by one of the calls waiting for this renewal, if any is still lendable. */
  #borrow(): Permit | undefined {
    for (let loan = this.#loans.shift(); loan; loan = this.#loans.shift()) {
      const permit = loan.lend();
      if (permit) return permit;
    }
    return undefined;
  }

  async #doRenew(by: Renewer, current: StoredToken | undefined, reason: RenewalReason): Promise<StoredToken> {
    const { lock, key } = this.#deps;
    if (!lock) return this.#renewNow(by, current, reason);
    return lock.withRenewalLock(key, async () => {
      // Another process may have renewed while this one waited for the lock: use its pair.
      const latest = await this.#read();
      const renewedElsewhere = latest && latest.access_token !== current?.access_token;
      if (renewedElsewhere && latest.access_token !== this.#refused && !this.#isStale(latest)) return latest;
      return this.#renewNow(by, latest ?? current, reason);
    });
  }

  async #renewNow(
    by: Renewer,
    current: StoredToken | undefined,
    reason: RenewalReason,
  ): Promise<StoredToken> {
    const { logger, key } = this.#deps;
    // A pair whose answer carried no refresh token holds `''`: log in, never refresh with nothing.
    if (current?.refresh_token) {
      try {
        const pair = await by.refresh(current.refresh_token, this.#borrow(), key);
        // An answer without a new refresh token leaves the one just used valid (RFC 6749, section 6).
        const stored = await this.save(
          pair.refresh_token ? pair : { ...pair, refresh_token: current.refresh_token },
        );
        logger.info?.('oa-messaging: access token refreshed', { reason });
        by.events.emit('tokenRefresh', { kind: 'refresh', reason });
        return stored;
      } catch (error) {
        // A refused refresh token (expired, revoked, rotated away) is answered with a 4xx: log in
        // again. Anything else (network, 5xx after retries, 429) is not a verdict on the token.
        if (!(error instanceof OAApiError) || error.status >= 500 || error instanceof OARateLimitError)
          throw error;
        logger.info?.(`oa-messaging: refresh token refused (${error.status}), logging in again`);
      }
    }
    try {
      const stored = await this.save(await by.login(this.#borrow(), key));
      logger.info?.('oa-messaging: access token obtained', { reason });
      by.events.emit('tokenRefresh', { kind: 'login', reason });
      return stored;
    } catch (error) {
      // The credentials are refused: forget the pair too, so that the next call logs in, not replays it.
      if (error instanceof OAUnauthorizedError) {
        this.#lastSeen = undefined;
        await this.#deps.store.delete(this.#deps.key);
      }
      throw error;
    }
  }
}
