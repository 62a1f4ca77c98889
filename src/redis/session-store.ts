/** The bot's session store in Redis: one session per user, shared by every process of a bot. */
import type { BotSessionStore } from '../bot/session.js';
import { OAConfigError } from '../errors.js';
import { connectionFrom, type RedisConnectionOptions } from './connection.js';
import { DELETE_VALUE, GET_VALUE, SET_VALUE } from './scripts.js';

/** Options of {@link createRedisSessionStore}. */
export type RedisSessionStoreOptions = {
  /**
   * Prepended to every key: `${prefix}session:${key}`.
   * @default 'oa:'
   */
  prefix?: string | undefined;
  /**
   * How long each call to Redis may take, connecting included; past it the event fails with
   * `OAConnectionError` (the webhook answers 500 and the OA delivers again, or the inbox retries it).
   * @default 2000
   */
  commandTimeoutMs?: number | undefined;
} & RedisConnectionOptions;

/** A {@link BotSessionStore} in Redis, and how to let go of it. */
export interface RedisSessionStore extends BotSessionStore {
  /** Quits the connection it opened from `url`; a `client` you passed in stays open. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Bot sessions (`createBot({ sessions })` of `oa-messaging/bot`) kept in Redis, so that every process
 * of a bot sees a user's session: each one JSON text under `${prefix}session:…`, expiring `sessionTtlMs`
 * after it was last saved. Creating it opens nothing: with `url`, ioredis is imported and connected on
 * first use.
 *
 * @example
 * ```ts
 * const sessions = createRedisSessionStore({ url: 'redis://127.0.0.1:6379' });
 * const bot = createBot({ client, sessions });
 * ```
 */
export function createRedisSessionStore(options: RedisSessionStoreOptions): RedisSessionStore {
  if (typeof options !== 'object' || options === null) {
    throw new OAConfigError('createRedisSessionStore needs { url } or { client }');
  }
  const connection = connectionFrom(options, 'createRedisSessionStore', 'bot session store');
  const prefix = options.prefix ?? 'oa:';
  if (typeof prefix !== 'string') throw new OAConfigError('prefix must be a string');
  const keyOf = (key: string) => `${prefix}session:${key}`;
  return {
    async get(key) {
      const value = await connection.run(GET_VALUE, [keyOf(key)], []);
      return typeof value === 'string' ? value : undefined;
    },
    async set(key, value, ttlMs) {
      await connection.run(SET_VALUE, [keyOf(key)], [value, Math.max(1, Math.ceil(ttlMs))]);
    },
    async delete(key) {
      await connection.run(DELETE_VALUE, [keyOf(key)], []);
    },
    close: () => connection.close(),
  };
}
