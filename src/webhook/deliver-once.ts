/**
 * Deduplication that cannot drop a message. A delivery claims its message's key before `onEvent`; a
 * duplicate that finds the key in flight does not answer at once (the first `onEvent` may still fail)
 * but waits for the outcome: done means 200, released means it claims the key and runs `onEvent`
 * itself. The wait is bounded; past it the duplicate answers 503 and the sender tries again later.
 */

import { isThenable, sleep } from '../core/call-control.js';
import type { Logger } from '../core/logger.js';
import { OAConfigError } from '../errors.js';
import {
  DEFAULT_DEDUPE,
  MemoryDedupeStore,
  type WebhookDedupeOptions,
  type WebhookDedupeState,
  type WebhookDedupeStore,
} from './dedupe.js';
import { keepClaim, type StoreAttempt } from './keep-claim.js';

/** How a delivery ended: `onEvent` ran and succeeded, another delivery had done it, or the wait ran out. */
type DeliveryOutcome = 'processed' | 'duplicate' | 'timeout';

/**
 * Runs `run` for `key` unless another delivery did or does; `run`'s failure is rethrown. `run` may
 * answer synchronously (an `onEvent` that returns no promise): then, with a store that answers
 * synchronously too (the in-memory one), so does this, and no timer is set.
 */
export type DeliverOnce = (
  key: string,
  run: () => void | Promise<void>,
) => DeliveryOutcome | Promise<DeliveryOutcome>;

/** First poll of a waiting duplicate, growing by half up to {@link MAX_POLL_MS}. */
const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 200;

function positiveMs(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OAConfigError(`webhook handler: dedupe.${name} must be a positive number of ms`);
  }
  return Math.ceil(value);
}

function checkStore(store: WebhookDedupeStore): WebhookDedupeStore {
  const methods = ['claim', 'complete', 'release'] as const;
  if (typeof store !== 'object' || store === null || methods.some((m) => typeof store[m] !== 'function')) {
    throw new OAConfigError('webhook handler: dedupe.store must have claim, complete and release methods');
  }
  if (store.extend !== undefined && typeof store.extend !== 'function') {
    throw new OAConfigError('webhook handler: dedupe.store.extend must be a method when present');
  }
  return store;
}

/** Builds the deduplication of one handler from its `dedupe` option. Throws at once on bad options. */
export function createDeliverOnce(options: WebhookDedupeOptions, logger: Logger): DeliverOnce {
  const ttlMs = positiveMs('ttlMs', options.ttlMs, DEFAULT_DEDUPE.ttlMs);
  const claimTtlMs = positiveMs('claimTtlMs', options.claimTtlMs, DEFAULT_DEDUPE.claimTtlMs);
  const waitTimeoutMs = positiveMs('waitTimeoutMs', options.waitTimeoutMs, DEFAULT_DEDUPE.waitTimeoutMs);
  const store =
    options.store === undefined
      ? new MemoryDedupeStore(options.max === undefined ? {} : { max: options.max })
      : checkStore(options.store);
  // Deliveries of this process in flight, so that a local duplicate wakes as soon as one ends; a
  // delivery in another process is only seen by polling the store.
  const inFlight = new Map<string, (() => void)[]>();

  /**
   * Store failures cost deduplication, never the message: they are logged and the delivery goes on.
   * A store that answers synchronously is answered synchronously (no promise), the in-memory one.
   */
  function attempt<T>(what: string, step: () => T | Promise<T>): T | undefined | Promise<T | undefined> {
    const failed = (error: unknown) => {
      logger.error?.(`oa-messaging webhook: the dedupe store failed to ${what}`, { error });
      return undefined;
    };
    try {
      const answer = step();
      return isThenable(answer) ? Promise.resolve(answer).then((value) => value, failed) : answer;
    } catch (error) {
      return failed(error);
    }
  }
  const attemptAsync: StoreAttempt = async (what, step) => attempt(what, step);

  /**
   * Runs `run` holding the claim; `claimed` is false when the store failed to claim (nothing to keep).
   * Then the store is still told the outcome, in case it answers again, but the answer does not wait
   * for it: a store that just failed (or did not answer in time) would likely delay it once more.
   * Local duplicates waiting in {@link wait} are woken once the outcome is told. Synchronous when `run`
   * and the store are (then no duplicate can come in between).
   */
  function runClaimed(
    key: string,
    owner: string,
    claimed: boolean,
    run: () => void | Promise<void>,
  ): void | Promise<void> {
    let ran: void | Promise<void>;
    try {
      ran = run();
    } catch (error) {
      ran = Promise.reject(error);
    }
    // Nothing else ran while `run` ran synchronously: local duplicates can only come from here on.
    const rest = isThenable(ran)
      ? runningClaimed(key, owner, claimed, ran)
      : tell(claimed, 'complete a message', () => store.complete(key, owner, ttlMs));
    if (rest === undefined) return;
    const waiters: (() => void)[] = [];
    inFlight.set(key, waiters);
    const settle = () => {
      if (inFlight.get(key) === waiters) inFlight.delete(key);
      for (const wake of waiters) wake();
    };
    return rest.then(settle, (error: unknown) => {
      settle();
      throw error;
    });
  }

  /** The store step's promise when the delivery waits for it (it holds a claim), else `undefined`. */
  function tell(claimed: boolean, what: string, step: () => void | Promise<void>) {
    const told = attempt(what, step);
    return claimed && isThenable(told) ? Promise.resolve(told) : undefined;
  }

  /** The rest of {@link runClaimed} once `run` returned a promise: the claim is kept while it runs. */
  async function runningClaimed(key: string, owner: string, claimed: boolean, ran: PromiseLike<void>) {
    try {
      const stopKeeping = claimed
        ? keepClaim(store, key, owner, claimTtlMs, attemptAsync, logger)
        : undefined;
      try {
        await ran;
      } finally {
        // Stopped before complete or release, so that no extend follows them.
        stopKeeping?.();
      }
      await tell(claimed, 'complete a message', () => store.complete(key, owner, ttlMs));
    } catch (error) {
      // Released before the waiters wake, so that one of them claims the key and processes the message.
      await tell(claimed, 'release a message', () => store.release(key, owner));
      throw error;
    }
  }

  /** What a claim's answer means: the outcome, or `undefined` while another delivery holds the key. */
  function decide(
    key: string,
    owner: string,
    state: WebhookDedupeState | undefined,
    run: () => void | Promise<void>,
  ): DeliveryOutcome | Promise<DeliveryOutcome> | undefined {
    if (state === 'done') {
      logger.debug?.('oa-messaging webhook: duplicate delivery skipped (200)');
      return 'duplicate';
    }
    if (state === 'in-flight') return undefined;
    // Claimed, or the store failed (undefined): process it.
    const ran = runClaimed(key, owner, state === 'claimed', run);
    return isThenable(ran) ? ran.then(() => 'processed' as const) : 'processed';
  }

  /** Waits for the delivery that holds `key`, polling the store, until it ends or `deadline` passes. */
  async function waitTurn(
    key: string,
    owner: string,
    deadline: number,
    run: () => void | Promise<void>,
    claiming: WebhookDedupeState | undefined | PromiseLike<WebhookDedupeState | undefined>,
  ): Promise<DeliveryOutcome> {
    let state = await claiming;
    for (let pollMs = FIRST_POLL_MS; ; pollMs = Math.min(MAX_POLL_MS, pollMs * 1.5)) {
      const decided = decide(key, owner, state, run);
      if (decided !== undefined) return decided;
      const left = deadline - performance.now();
      if (left <= 0) return 'timeout';
      await wait(key, Math.min(pollMs, left));
      state = await attempt('claim a message', () => store.claim(key, owner, claimTtlMs));
    }
  }

  /** Waits up to `ms` for a local delivery of `key` to end (or for the next poll of the store). */
  async function wait(key: string, ms: number) {
    const nap = sleep(ms, undefined, 'waiting for an earlier delivery');
    inFlight.get(key)?.push(nap.wake);
    await nap.done;
  }

  // Each delivery's owner id: this handler's own random id and a count, unique across processes and
  // cheaper than a UUID per delivery. The Web Crypto global: the fetch handler also runs on edge runtimes.
  const ownerPrefix = globalThis.crypto.randomUUID();
  let deliveries = 0;

  return (key, run) => {
    const owner = `${ownerPrefix}:${++deliveries}`;
    const deadline = performance.now() + waitTimeoutMs;
    const claiming = attempt('claim a message', () => store.claim(key, owner, claimTtlMs));
    if (!isThenable(claiming)) {
      const decided = decide(key, owner, claiming, run);
      if (decided !== undefined) return decided;
    }
    return waitTurn(key, owner, deadline, run, claiming);
  };
}
