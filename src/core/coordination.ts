import type { Limiter, RateLimitOptions } from './rate-limit.js';
import type { TokenStore } from './token-store.js';

/**
 * State shared by every process that uses one api key (`coordination` option; `oa-messaging/redis`
 * provides one): the token pair, one renewal at a time, and the rate limits counted together.
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
  createLimiter(key: string, limits: Required<RateLimitOptions>): Limiter;
}
