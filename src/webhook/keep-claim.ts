/**
 * Keeps a delivery's claim on its message alive while its `onEvent` runs, as job queues keep a lease
 * (BullMQ's job locks, SQS's visibility timeout): a claim lasts `claimTtlMs` so that a dead holder's
 * message is taken over, and a live holder extends it every third of that, so that a slow `onEvent`
 * is not run a second time by a redelivery.
 */

import type { Logger } from '../core/logger.js';
import type { WebhookDedupeStore } from './dedupe.js';
import { keepLease } from './lease.js';

/** Runs a store step; a failure is logged and gives `undefined`, never a rejection. */
export type StoreAttempt = <T>(what: string, step: () => T | Promise<T>) => Promise<T | undefined>;

/**
 * Extends `owner`'s claim on `key` every `claimTtlMs / 3` until the returned function is called.
 * A store without `extend` gets no timer (its claims last `claimTtlMs`, as before `extend` existed).
 * A failing `extend` is logged by `attempt` and tried again at the next tick, in case the store comes
 * back; `false` (the claim is no longer this delivery's) stops it with a warning.
 */
export function keepClaim(
  store: WebhookDedupeStore,
  key: string,
  owner: string,
  claimTtlMs: number,
  attempt: StoreAttempt,
  logger: Logger,
): () => void {
  const extend = store.extend;
  if (typeof extend !== 'function') return () => {};
  return keepLease(
    () => attempt('extend a claim', () => extend.call(store, key, owner, claimTtlMs)),
    claimTtlMs / 3,
    () =>
      logger.warn?.(
        'oa-messaging webhook: a delivery lost its claim while onEvent ran; a redelivery may process the message too',
        { claimTtlMs },
      ),
  );
}
