/** The video tickets known to be ready, shared in Redis by every process of an api key. */
import type { ReadyVideos } from '../core/options.js';
import type { RedisConnection } from './connection.js';
import { script } from './script.js';

/** KEYS[1]: the ticket's key; ARGV[1]: how long it counts, in ms. */
const MARK_READY = script(`return redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])`);
/** KEYS[1]: the ticket's key. 1 when it is known ready. */
const IS_READY = script(`return redis.call('EXISTS', KEYS[1])`);

/**
 * A {@link ReadyVideos} in Redis: one key per ticket, `${prefix}video:${apiKey}:${ticket_id}`, that
 * expires by itself (tickets are not forever; a forgotten one costs one probe send).
 */
export class RedisReadyVideos implements ReadyVideos {
  readonly #connection: RedisConnection;
  readonly #prefix: string;
  readonly #ttlMs: number;

  constructor(connection: RedisConnection, prefix: string, ttlMs: number) {
    this.#connection = connection;
    this.#prefix = prefix;
    this.#ttlMs = ttlMs;
  }

  #key(apiKey: string, ticket_id: string): string {
    return `${this.#prefix}video:${apiKey}:${ticket_id}`;
  }

  async markReady(apiKey: string, ticket_id: string): Promise<void> {
    await this.#connection.run(MARK_READY, [this.#key(apiKey, ticket_id)], [this.#ttlMs]);
  }

  async isReady(apiKey: string, ticket_id: string): Promise<boolean> {
    return (await this.#connection.run(IS_READY, [this.#key(apiKey, ticket_id)], [])) === 1;
  }
}
