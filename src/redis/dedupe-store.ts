import { checkConfig } from '../schemas/option-checks.js';
import type { WebhookDedupeState, WebhookDedupeStore } from '../webhook/dedupe.js';
import { connectionFrom, type RedisConnectionOptions, redisOptionsSchema } from './connection.js';
import { CLAIM_MESSAGE, COMPLETE_MESSAGE, EXTEND_MESSAGE, RELEASE_MESSAGE } from './scripts.js';

/** Options of {@link createRedisDedupeStore}. */
export type RedisDedupeStoreOptions = {
  /**
   * Prepended to every key: `${prefix}dedupe:${messageKey}`.
   * @default 'oa:'
   */
  prefix?: string | undefined;
  /**
   * How long each call to Redis may take, connecting included. Past it the call fails, and the webhook
   * handler processes the delivery anyway (logged, as for any store failure): with Redis paused, down
   * or unreachable a delivery is answered about this much later than usual, never held until Redis
   * comes back. Keep it well under the sender's delivery timeout.
   * @default 2000
   */
  commandTimeoutMs?: number | undefined;
} & RedisConnectionOptions;

/** A {@link WebhookDedupeStore} in Redis, and how to let go of it. */
export interface RedisDedupeStore extends WebhookDedupeStore {
  /** Quits the connection it opened from `url`; a `client` you passed in stays open. Safe to call twice. */
  close(): Promise<void>;
}

const STATES: ReadonlySet<string> = new Set<WebhookDedupeState>(['claimed', 'in-flight', 'done']);

/** What the options of `createRedisDedupeStore` take, checked once by it. */
const OptionsSchema = redisOptionsSchema('createRedisDedupeStore');

/**
 * A dedupe store shared through Redis by every instance of a webhook receiver, so that a redelivery
 * that reaches another instance behind the load balancer is still recognised. A delivery claims its
 * message with `SET NX PX`, extends the claim while `onEvent` runs (compare and `PEXPIRE`: the claim
 * expires after `claimTtlMs` once its process died), marks it done when `onEvent` succeeded and deletes
 * its claim when `onEvent` failed, so that the redelivery is processed. Creating it opens nothing:
 * with `url`, ioredis is imported and connected on first use.
 *
 * @example
 * ```ts
 * const store = createRedisDedupeStore({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
 * const handler = createWebhookHandler({ onEvent, dedupe: { store } });
 * // on shutdown, after the server closed:
 * await store.close();
 * ```
 */
export function createRedisDedupeStore(options: RedisDedupeStoreOptions): RedisDedupeStore {
  checkConfig(OptionsSchema, options, 'createRedisDedupeStore');
  const connection = connectionFrom(options, 'webhook dedupe store');
  const prefix = options.prefix ?? 'oa:';
  const keyOf = (key: string) => `${prefix}dedupe:${key}`;
  return {
    async claim(key, owner, claimTtlMs) {
      const state = await connection.run(CLAIM_MESSAGE, [keyOf(key)], [owner, Math.ceil(claimTtlMs)]);
      if (typeof state !== 'string' || !STATES.has(state)) {
        throw new Error(`unexpected answer from the claim script: ${String(state)}`);
      }
      return state as WebhookDedupeState;
    },
    async extend(key, owner, claimTtlMs) {
      return (await connection.run(EXTEND_MESSAGE, [keyOf(key)], [owner, Math.ceil(claimTtlMs)])) === 1;
    },
    async complete(key, _owner, ttlMs) {
      await connection.run(COMPLETE_MESSAGE, [keyOf(key)], [Math.ceil(ttlMs)]);
    },
    async release(key, owner) {
      await connection.run(RELEASE_MESSAGE, [keyOf(key)], [owner]);
    },
    close: () => connection.close(),
  };
}
