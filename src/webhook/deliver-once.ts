/**
 * Deduplication that cannot drop a message. A delivery claims its message's key before `onEvent`; a
 * duplicate that finds the key in flight does not answer at once (the first `onEvent` may still fail)
 * but waits for the outcome: done means 200, released means it claims the key and runs `onEvent`
 * itself. The wait is bounded; past it the duplicate answers 503 and the sender tries again later.
 */

import { isThenable, sleep } from '../core/call-control.js';
import type { Logger } from '../core/logger.js';
import { isObject, judged, optionsOf, positive } from '../schemas/option-checks.js';
import {
  DEFAULT_DEDUPE,
  MemoryDedupeStore,
  type WebhookDedupeOptions,
  type WebhookDedupeState,
  type WebhookDedupeStore,
} from './dedupe.js';
import { keepClaim } from './keep-claim.js';

/** How a delivery ended: `onEvent` ran and succeeded, another delivery had done it, or the wait ran out. */
type DeliveryOutcome = 'processed' | 'duplicate' | 'timeout';

/**
 * Runs `run` for `key` unless another delivery did or does; `run`'s failure is rethrown. With the
 * in-memory store and a `run` that answers synchronously (an `onEvent` that returns no promise), so
 * does this: no promise, no timer.
 */
export type DeliverOnce = (
  key: string,
  run: () => void | Promise<void>,
) => DeliveryOutcome | Promise<DeliveryOutcome>;

/** First poll of a waiting duplicate, growing by half up to {@link MAX_POLL_MS}. */
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 200;

/** Why `store` cannot be a dedupe store, or `undefined` when it can. */
function storeProblem(store: unknown): string | undefined {
  const methods = ['claim', 'complete', 'release'] as const;
  if (!isObject(store) || methods.some((m) => typeof store[m] !== 'function')) {
    return 'must have claim, complete and release methods';
  }
  return store.extend !== undefined && typeof store.extend !== 'function'
    ? 'must have extend as a method when present'
    : undefined;
}

const MS = positive('a positive number of ms');

/** What {@link WebhookDedupeOptions} takes: the handlers' `dedupe` option when it is an object. */
export const DEDUPE_OPTIONS = optionsOf(
  { store: judged(storeProblem), max: positive(), ttlMs: MS, claimTtlMs: MS, waitTimeoutMs: MS },
  'must be true, false or the dedupe options',
);

/** Builds the deduplication of one handler from its `dedupe` option. Throws at once on bad options. */
export function createDeliverOnce(options: WebhookDedupeOptions, logger: Logger): DeliverOnce {
  // Checked with the handler's options (DEDUPE_OPTIONS); whole ms, as Redis takes them.
  const ttlMs = Math.ceil(options.ttlMs ?? DEFAULT_DEDUPE.ttlMs);
  const claimTtlMs = Math.ceil(options.claimTtlMs ?? DEFAULT_DEDUPE.claimTtlMs);
  const waitTimeoutMs = Math.ceil(options.waitTimeoutMs ?? DEFAULT_DEDUPE.waitTimeoutMs);
  const memory =
    options.store === undefined
      ? new MemoryDedupeStore(options.max === undefined ? {} : { max: options.max })
      : undefined;
  const store = memory ?? (options.store as WebhookDedupeStore);
  // Deliveries of this process in flight, so that a local duplicate wakes as soon as one ends; a
  // delivery in another process is only seen by polling the store.
  const inFlight = new Map<string, Promise<void>>();

  /** Store failures cost deduplication, never the message: they are logged and the delivery goes on. */
  async function attempt<T>(what: string, step: () => T | Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (error) {
      logger.error?.(`oa-messaging webhook: the dedupe store failed to ${what}`, { error });
      return undefined;
    }
  }

  /**
   * Runs `run` holding the claim; `claimed` is false when the store failed to claim (nothing to keep).
   * Then the store is still told the outcome, in case it answers again, but the answer does not wait
   * for it: a store that just failed (or did not answer in time) would likely delay it once more.
   */
  async function runClaimed(key: string, owner: string, claimed: boolean, run: () => void | Promise<void>) {
    let ended = () => {};
    const settled = new Promise<void>((resolve) => {
      ended = resolve;
    });
    inFlight.set(key, settled);
    const stopKeeping = claimed ? keepClaim(store, key, owner, claimTtlMs, attempt, logger) : () => {};
    const tell = async (what: string, step: () => void | Promise<void>) => {
      const told = attempt(what, step);
      if (claimed) await told;
    };
    try {
      try {
        await run();
      } finally {
        // Stopped before complete or release, so that no extend follows them.
        stopKeeping();
      }
      await tell('complete a message', () => store.complete(key, owner, ttlMs));
    } catch (error) {
      // Released before the waiters wake, so that one of them claims the key and processes the message.
      await tell('release a message', () => store.release(key, owner));
      throw error;
    } finally {
      if (inFlight.get(key) === settled) inFlight.delete(key);
      ended();
    }
  }

  /**
   * A delivery that claims, processes and completes through `store`'s promises, waiting its turn;
   * `first` is the answer of a claim already made.
   */
  async function deliver(
    key: string,
    owner: string,
    run: () => void | Promise<void>,
    first?: WebhookDedupeState,
  ) {
    const deadline = performance.now() + waitTimeoutMs;
    let claimed = first;
    for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(MAX_POLL_MS, pollMs * 1.5)) {
      const state = claimed ?? (await attempt('claim a message', () => store.claim(key, owner, claimTtlMs)));
      claimed = undefined;
      if (state === 'done') {
        logger.debug?.('oa-messaging webhook: duplicate delivery skipped (200)');
        return 'duplicate';
      }
      if (state !== 'in-flight') {
        // Claimed, or the store failed (undefined): process it.
        await runClaimed(key, owner, state === 'claimed', run);
        return 'processed';
      }
      const left = deadline - performance.now();
      if (left <= 0) return 'timeout';
      const nap = sleep(Math.min(pollMs, left), undefined, 'waiting for an earlier delivery');
      inFlight.get(key)?.then(nap.wake);
      await nap.done;
    }
  }

  // Each delivery's owner id: this handler's own random id and a count, unique across processes and
  // cheaper than a UUID per delivery. The Web Crypto global: the fetch handler also runs on edge
  // runtimes; made at the first delivery, since a Worker may not make random values outside a request.
  let ownerPrefix: string | undefined;
  let deliveries = 0;

  return (key, run) => {
    ownerPrefix ??= globalThis.crypto.randomUUID();
    const owner = `${ownerPrefix}:${++deliveries}`;
    const state = memory?.claim(key, owner, claimTtlMs);
    if (memory && state === 'claimed') {
      // The in-memory store answers at once and never fails, and no other delivery can come while
      // `run` runs synchronously: such a delivery needs no promise, no timer and no waiters' list.
      let ran: void | Promise<void>;
      try {
        ran = run();
      } catch (error) {
        memory.release(key, owner);
        throw error;
      }
      if (!isThenable(ran)) {
        memory.complete(key, owner, ttlMs);
        return 'processed';
      }
      const running = ran;
      return runClaimed(key, owner, true, () => running).then(() => 'processed' as const);
    }
    // A duplicate (its claim's answer goes on), or another store.
    return deliver(key, owner, run, state);
  };
}
