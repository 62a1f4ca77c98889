import type { Limiter, RateLimits } from './rate-limit.js';
import type { ReadyVideos } from './ready-videos.js';
import type { TokenStore } from './token-store.js';

/**
 * State shared by every process that uses one api key (`coordination` option; `oa-messaging/redis`
 * provides one): the token pair, one renewal at a time, the rate limits counted together, and the
 * video tickets known to be ready.
 */
export interface Coordination {
  /** Where the shared token pair lives, keyed by api key. */
  tokenStore: TokenStore;
  /**
   * Runs `renew` while holding the renewal lock of `key`, so that one process at a time logs in or
   * refreshes. The lock expires on its own if its holder dies. `renew` must read the store first:
   * another process may have renewed while this one waited.
   */
  withRenewalLock<T>(key: string, renew: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** A limiter whose windows count the requests of every process with the same `key`. */
  createLimiter(key: string, limits: RateLimits): Limiter;
  /**
   * The video tickets known to be ready, for every process: a `sendVideo` success in one lets the
   * others broadcast that ticket without a probe.
   * @default none: each process remembers its own
   */
  readyVideos?: ReadyVideos | undefined;
}
