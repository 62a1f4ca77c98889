/** A token pair as the SDK keeps it. */
export interface StoredToken {
  access_token: string;
  refresh_token: string;
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
  get(key: string): Promise<StoredToken | undefined> | StoredToken | undefined;
  set(key: string, token: StoredToken): Promise<void> | void;
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
