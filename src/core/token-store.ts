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
 * Where the client keeps its token pair, keyed by api key. The default keeps it in memory; a shared
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
