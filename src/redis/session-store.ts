/** The bot's session store in Redis: one session per user, shared by every process of a bot. */
import type { BotSessionStore, BotSessionWriteOptions } from '../bot/session.js';
import { OAConfigError } from '../errors.js';
import { checkConfig } from '../schemas/option-checks.js';
import { connectionFrom, type RedisConnectionOptions, redisOptionsSchema } from './connection.js';
import { script } from './script.js';
import { GET_VALUE } from './scripts.js';

/**
 * A fenced write is kept as `~<fence>~<JSON>` (JSON never starts with `~`), so that the check and the
 * write are one script on one key. Reads strip it.
 */
const HELD_FENCE = `
local current = redis.call('GET', KEYS[1])
local held = current and tonumber(string.match(current, '^~(%d+)~'))
if ARGV[1] ~= '' and held and held > tonumber(ARGV[1]) then return 0 end
`;

/**
 * Compare and set: KEYS[1] the session; ARGV: the fence ('' for none), the JSON, the ttl in ms. 0 (not
 * written) when the last fenced write had a greater fence, else 1.
 */
const SET_SESSION = script(`${HELD_FENCE}
local value = ARGV[2]
if ARGV[1] ~= '' then value = '~' .. ARGV[1] .. '~' .. value end
redis.call('SET', KEYS[1], value, 'PX', ARGV[3])
return 1
`);

/** Compare and delete: KEYS[1] the session; ARGV[1] the fence ('' for none). As {@link SET_SESSION}. */
const DELETE_SESSION = script(`${HELD_FENCE}
redis.call('DEL', KEYS[1])
return 1
`);

/** The JSON of a stored session, without the fence of a fenced write. */
const withoutFence = (value: string) =>
  value.startsWith('~') ? value.slice(value.indexOf('~', 1) + 1) : value;

/** A fence as the scripts take it: digits, or '' for none. */
function fenceText(fence: number | undefined): string {
  if (fence === undefined) return '';
  if (!Number.isSafeInteger(fence) || fence < 0) {
    throw new OAConfigError('a session fence must be a whole number, 0 or more');
  }
  return String(fence);
}

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

/**
 * A {@link BotSessionStore} in Redis, and how to let go of it. Its writes compare and set: one with a
 * `fence` lower than that of the last fenced write of the session is refused (`false`).
 */
export interface RedisSessionStore extends BotSessionStore {
  set(key: string, value: string, ttlMs: number, options?: BotSessionWriteOptions): Promise<boolean>;
  delete(key: string, options?: BotSessionWriteOptions): Promise<boolean>;
  /** Quits the connection it opened from `url`; a `client` you passed in stays open. Safe to call twice. */
  close(): Promise<void>;
}

/** What the options of `createRedisSessionStore` take, checked once by it. */
const OptionsSchema = redisOptionsSchema('createRedisSessionStore');

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
  checkConfig(OptionsSchema, options, 'createRedisSessionStore');
  const connection = connectionFrom(options, 'bot session store');
  const prefix = options.prefix ?? 'oa:';
  const keyOf = (key: string) => `${prefix}session:${key}`;
  return {
    async get(key) {
      const value = await connection.run(GET_VALUE, [keyOf(key)], []);
      return typeof value === 'string' ? withoutFence(value) : undefined;
    },
    async set(key, value, ttlMs, options = {}) {
      const fence = fenceText(options.fence);
      const ttl = Math.max(1, Math.ceil(ttlMs));
      return (await connection.run(SET_SESSION, [keyOf(key)], [fence, value, ttl])) === 1;
    },
    async delete(key, options = {}) {
      return (await connection.run(DELETE_SESSION, [keyOf(key)], [fenceText(options.fence)])) === 1;
    },
    close: () => connection.close(),
  };
}
