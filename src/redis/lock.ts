/** The renewal lock: one process at a time logs in or refreshes the token of an api key. */
import { randomUUID } from 'node:crypto';
import { abortError, sleep } from '../core/call-control.js';
import type { Logger } from '../core/logger.js';
import { keepLease } from '../webhook/lease.js';
import type { RedisConnection } from './connection.js';
import { EXTEND_LOCK, RELEASE_LOCK, TAKE_LOCK } from './scripts.js';

export interface RenewalLockOptions {
  prefix: string;
  lockTtlMs: number;
  logger: Logger;
}

/** First poll of a waiter, growing by half each time up to {@link MAX_POLL_MS}, with jitter. */
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 250;

/**
 * Runs `renew` while holding `${prefix}lock:${key}` (SET NX PX with a random value of this holder).
 * The holder extends the lock every third of its ttl while `renew` runs, so a slow login keeps it; a
 * holder that dies stops extending it, and it expires within `lockTtlMs`. Waiters poll with a growing
 * delay and stop waiting, with `OAAbortError`, when `signal` fires.
 */
export async function withRenewalLock<T>(
  connection: RedisConnection,
  options: RenewalLockOptions,
  key: string,
  renew: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const lockKey = `${options.prefix}lock:${key}`;
  const owner = randomUUID();
  const what = 'waiting for the token renewal lock';
  for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(MAX_POLL_MS, pollMs * 1.5)) {
    if (signal?.aborted) throw abortError(signal, what);
    if ((await connection.run(TAKE_LOCK, [lockKey], [owner, options.lockTtlMs])) === 'OK') break;
    await sleep(pollMs / 2 + (Math.random() * pollMs) / 2, signal, what).done;
  }
  const release = () => {
    connection.run(RELEASE_LOCK, [lockKey], [owner]).catch(() => {
      // It expires by itself within lockTtlMs.
    });
  };
  if (signal?.aborted) {
    release();
    throw abortError(signal, what);
  }
  // Extended every third of its ttl while `renew` runs; a failed extend is tried again at the next.
  const stopExtending = keepLease(
    () =>
      connection.run(EXTEND_LOCK, [lockKey], [owner, options.lockTtlMs]).then(
        (extended) => extended === 1,
        (error: unknown) => {
          options.logger.warn?.('oa-messaging: could not extend the token renewal lock', {
            error: (error as Error).message,
          });
          return undefined;
        },
      ),
    options.lockTtlMs / 3,
    () =>
      options.logger.warn?.(
        'oa-messaging: the token renewal lock expired before the renewal ended; another process may renew too',
        { lockTtlMs: options.lockTtlMs },
      ),
  );
  try {
    return await renew();
  } finally {
    stopExtending();
    release();
  }
}
