/**
 * `oa-messaging/redis`: state shared in Redis by every process that speaks to one OA (its api key at
 * its base URL): the token pair (one login or refresh at a time), both rate limits, counted together,
 * the video tickets known to be ready, and the answers of uploads, reused for the same bytes.
 *
 * @example
 * ```ts
 * import { createRedisCoordination } from 'oa-messaging/redis';
 * const coordination = createRedisCoordination({ url: 'redis://127.0.0.1:6379' });
 * const client = new OAClient({ baseUrl, apiKey, apiSecret, coordination });
 * // ...
 * await client.close();
 * await coordination.close();
 * ```
 *
 * @module oa-messaging/redis
 */

import { type Logger, silentLogger } from '../core/logger.js';
import type { Coordination } from '../core/options.js';
import type { Limiter, RateLimits } from '../core/rate-limit.js';
import { aLogger, checkConfig, checked, isNumber } from '../schemas/option-checks.js';
import { READY_VIDEO_TTL_MS } from '../video/ready-videos.js';
import { connectionFrom, REDIS_MS, type RedisConnectionOptions, redisOptionsSchema } from './connection.js';
import { RedisLimiter } from './limiter.js';
import { withRenewalLock } from './lock.js';
import { RedisReadyVideos } from './ready-videos.js';
import { RedisTokenStore } from './token-store.js';
import { RedisUploadAnswers } from './upload-answers.js';

export type { RedisClient } from './client.js';
export type { RedisConnectionOptions } from './connection.js';
export {
  createRedisDedupeStore,
  type RedisDedupeStore,
  type RedisDedupeStoreOptions,
} from './dedupe-store.js';
export {
  createRedisSessionStore,
  type RedisSessionStore,
  type RedisSessionStoreOptions,
} from './session-store.js';

/** Options of {@link createRedisCoordination} other than the connection. */
export interface RedisCoordinationSettings {
  /**
   * Prepended to every key, each of one OA, `<oa>` being `<apiKey>@<baseUrl>`: `${prefix}token:<oa>`,
   * `${prefix}lock:<oa>`, `${prefix}limit:{<oa>}:general` and `:upload`, `${prefix}video:<oa>:<ticket_id>`,
   * `${prefix}upload:<oa>:<endpoint URL>:<sha256>`.
   * @default 'oa:'
   */
  prefix?: string | undefined;
  /**
   * How long the token renewal lock lives without its holder extending it (the holder extends it every
   * third of this while it logs in or refreshes). A process that dies holding it delays the others by
   * at most this much.
   * @default 10_000
   */
  lockTtlMs?: number | undefined;
  /**
   * How long a request in flight keeps its rate-limit slots without news from its process (which renews
   * this lease every third of it). A process that dies mid-request gives its slots back this long, plus
   * one window, after its last renewal.
   * @default 30_000
   */
  inFlightLeaseMs?: number | undefined;
  /**
   * How long the token pair stays in Redis after its access token expired, so that the refresh token can
   * still be used; `false` keeps it until it is replaced.
   * @default 86_400_000 (one day)
   */
  keepTokenAfterExpiryMs?: number | false | undefined;
  /**
   * How long a video ticket stays known to be ready after a `sendVideo` of it succeeded. A ticket
   * forgotten sooner than the API forgets it only costs one more probe send before a broadcast.
   * @default 604_800_000 (7 days)
   */
  readyVideoTtlMs?: number | undefined;
  /**
   * How long each call to Redis may take, connecting included (a token read, the renewal lock, a
   * rate-limit slot). Past it the call gives up: a request waiting on it fails with `OAConnectionError`
   * and `deliveryUnknown: false` (nothing was sent), retried under the client's `maxRetries` like a
   * refused connection, so that a Redis outage surfaces within a few seconds even without a `timeoutMs`
   * on the call. A command Redis still runs after it (a paused Redis) at worst holds rate-limit slots
   * until their lease (`inFlightLeaseMs`) and one window run out.
   * @default 2000
   */
  commandTimeoutMs?: number | undefined;
  /**
   * Told of background failures that only cost time: a lock that could not be extended, a rate-limit
   * update that did not reach Redis. Never given a secret.
   * @default silent
   */
  logger?: Logger | undefined;
}

/** Where to find Redis (a URL, ioredis loaded on first use, or a client of yours), and the settings. */
export type RedisCoordinationOptions = RedisCoordinationSettings & RedisConnectionOptions;

/** A {@link Coordination} backed by Redis, and how to let go of it. */
export interface RedisCoordination extends Coordination {
  /**
   * Stops the limiters it made (queued requests reject) and quits the connection it opened from `url`;
   * a `client` you passed in stays open. Safe to call twice.
   */
  close(): Promise<void>;
}

/** What {@link RedisCoordinationOptions} takes, checked once by `createRedisCoordination`. */
const CoordinationOptionsSchema = redisOptionsSchema('createRedisCoordination', {
  lockTtlMs: REDIS_MS,
  inFlightLeaseMs: REDIS_MS,
  keepTokenAfterExpiryMs: checked(
    (v) => v === false || (isNumber(v) && v > 0),
    'must be a positive number of ms or false',
  ),
  readyVideoTtlMs: REDIS_MS,
  logger: aLogger,
});

/**
 * Shares the token pair, the rate limits, the ready video tickets and the upload answers of each api
 * key between processes through Redis. Pass it as the client's `coordination` option. Creating it
 * opens nothing: with `url`, ioredis is imported and connected on first use.
 *
 * @example
 * const coordination = createRedisCoordination({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
 * const client = new OAClient({ apiKey, apiSecret, coordination });
 */
export function createRedisCoordination(options: RedisCoordinationOptions): RedisCoordination {
  checkConfig(CoordinationOptionsSchema, options, 'createRedisCoordination');
  const logger = options.logger ?? silentLogger;
  const connection = connectionFrom(options, 'Redis coordination', (message) => logger.warn?.(message));
  const prefix = options.prefix ?? 'oa:';
  const lockTtlMs = Math.ceil(options.lockTtlMs ?? 10_000);
  const inFlightLeaseMs = Math.ceil(options.inFlightLeaseMs ?? 30_000);
  const keep = options.keepTokenAfterExpiryMs;
  const keepTokenAfterExpiryMs = keep === false ? false : Math.ceil(keep ?? 86_400_000);
  const readyVideoTtlMs = Math.ceil(options.readyVideoTtlMs ?? READY_VIDEO_TTL_MS);

  const limiters = new Set<Limiter>();
  return {
    tokenStore: new RedisTokenStore(connection, prefix, keepTokenAfterExpiryMs),
    readyVideos: new RedisReadyVideos(connection, prefix, readyVideoTtlMs),
    // Each answer for the client's `reuseUploads.ttlMs`.
    uploadAnswers: new RedisUploadAnswers(connection, prefix),
    withRenewalLock<T>(key: string, renew: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      return withRenewalLock(connection, { prefix, lockTtlMs, logger }, key, renew, signal);
    },
    createLimiter(key: string, limits: RateLimits): Limiter {
      const limiter: Limiter = new RedisLimiter(connection, key, limits, {
        prefix,
        inFlightLeaseMs,
        logger,
        onStop: () => limiters.delete(limiter),
      });
      limiters.add(limiter);
      return limiter;
    },
    async close() {
      for (const limiter of [...limiters]) limiter.stop();
      await connection.close();
    },
  };
}
