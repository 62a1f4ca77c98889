/** The token pair of each OA (api key and base URL), shared in Redis by every process. */
import type { StoredToken, TokenStore } from '../core/auth.js';
import type { RedisConnection } from './connection.js';
import { DELETE_VALUE, GET_VALUE, SET_VALUE } from './scripts.js';

function isStoredToken(value: unknown): value is StoredToken {
  if (typeof value !== 'object' || value === null) return false;
  const token = value as Record<string, unknown>;
  return (
    typeof token.access_token === 'string' &&
    typeof token.refresh_token === 'string' &&
    typeof token.token_type === 'string' &&
    typeof token.obtained_at === 'number' &&
    typeof token.expires_at === 'number'
  );
}

/**
 * A {@link TokenStore} in Redis: one JSON pair per OA under `${prefix}token:<apiKey>@<baseUrl>`. The key
 * outlives the access token by `keepAfterExpiryMs`, so that a process can still use the refresh token
 * after a quiet spell, and then goes away by itself.
 */
export class RedisTokenStore implements TokenStore {
  readonly #connection: RedisConnection;
  readonly #prefix: string;
  readonly #keepAfterExpiryMs: number | false;

  constructor(connection: RedisConnection, prefix: string, keepAfterExpiryMs: number | false) {
    this.#connection = connection;
    this.#prefix = prefix;
    this.#keepAfterExpiryMs = keepAfterExpiryMs;
  }

  #key(apiKey: string): string {
    return `${this.#prefix}token:${apiKey}`;
  }

  async get(apiKey: string): Promise<StoredToken | undefined> {
    const text = await this.#connection.run(GET_VALUE, [this.#key(apiKey)], []);
    if (typeof text !== 'string') return undefined;
    try {
      const value: unknown = JSON.parse(text);
      // Anything else (another program's value, an older layout) counts as no token: log in again.
      return isStoredToken(value) ? value : undefined;
    } catch {
      return undefined;
    }
  }

  async set(apiKey: string, token: StoredToken): Promise<void> {
    const ttlMs =
      this.#keepAfterExpiryMs === false
        ? 0
        : Math.max(1000, Math.ceil(token.expires_at + this.#keepAfterExpiryMs - Date.now()));
    const { access_token, refresh_token, token_type, obtained_at, expires_at } = token;
    const json = JSON.stringify({ access_token, refresh_token, token_type, obtained_at, expires_at });
    await this.#connection.run(SET_VALUE, [this.#key(apiKey)], [json, ttlMs]);
  }

  async delete(apiKey: string): Promise<void> {
    await this.#connection.run(DELETE_VALUE, [this.#key(apiKey)], []);
  }
}
