/**
 * What a campaign needs of an outbox beyond storing and sending: which keys an add found already known,
 * cancelling a job not sent yet, and waiting for jobs to end (`waitFor`), driven by the outbox's events.
 */
import type { Queue } from 'bullmq';
import { type CallRegistry, sleep } from '../core/call-control.js';
import { OAAbortError, OAConnectionError, OATimeoutError, OAValidationError } from '../errors.js';
import type { RedisClient } from '../redis/client.js';
import type {
  OutboxEventName,
  OutboxEvents,
  OutboxJobStatus,
  OutboxListener,
  OutboxState,
} from './events.js';
import { checkKeyText, isAccountJobId, jobIdOf, keyOfJobId } from './methods.js';
import { beingHanded, cancelParked, forgetRemoved } from './outbox-redis/cancel.js';
import { ANCHOR_ID } from './outbox-redis/keys.js';

/** What `outbox.add` and `outbox.addMany` stored. */
export interface OutboxAddResult {
  /** Jobs this call stored. */
  added: number;
  /** Entries whose key was already known (added before, or earlier in this call): each keeps its one job. */
  known: number;
  /** Those entries' keys, in the order given (a key given twice and known twice is there twice). */
  knownKeys: string[];
}

/** What `outbox.cancel` did. */
export type OutboxCancelResult =
  | {
      /** The job was waiting or delayed: it is removed, never sent, and its key is free again. */
      cancelled: true;
    }
  | {
      /** Nothing was removed. */
      cancelled: false;
      /**
       * Why: `active` (a worker is sending it: it cannot be taken back), a final state (it already
       * ended), or `undefined` for a key never added or past its retention.
       */
      state: OutboxState | undefined;
    };

/** Options of `outbox.waitFor`. */
export interface OutboxWaitOptions {
  /**
   * How long to wait at most; then it rejects with `OATimeoutError` naming how many keys are still open.
   * @default no bound (the keys still open are read again every `recheckMs`, so a missed event
   * cannot hold the wait after the job has ended)
   */
  timeoutMs?: number | undefined;
  /**
   * How often the states of the keys still open are read again (`get`, a round trip per 100 keys), in
   * case an outcome's event was missed: events are news, and one can be lost (a worker that died
   * after storing its job's outcome, a reader that reconnected). Also ends the wait for a key cancelled
   * meanwhile, which is then left out of the result.
   * @default 5000
   */
  recheckMs?: number | undefined;
  /** Stops the wait: it rejects with `OAAbortError` (`cause`: the signal's reason). */
  signal?: AbortSignal | undefined;
}

/** BullMQ's states of a job not started: a cancel removes it (with BullMQ's `Queue.remove`). */
const NOT_STARTED = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children', 'paused']);

/** How long a cancel waits for a job being handed to BullMQ (admitted to its turn) to get there. */
const HANDING_WAIT_MS = 50;
const HANDING_TRIES = 40;

/**
 * Removes the job of `key` if it is waiting or delayed: a parked job of an account from its lanes
 * (the outbox's keys), a job BullMQ holds with BullMQ's own `Queue.remove` (which never removes an
 * active job), its record with it; else says the job's state.
 */
export async function cancelJob(
  outbox: Pick<WaitSource, 'get'>,
  open: () => Promise<[RedisClient, Queue]>,
  keyPrefix: string,
  key: unknown,
  account?: string,
): Promise<OutboxCancelResult> {
  if (typeof key !== 'string') throw new OAValidationError('cancel needs a key (a string)', []);
  checkKeyText(key);
  const [redis, queue] = await open();
  const id = jobIdOf(key, account);
  if (account !== undefined && (await cancelParked(redis, keyPrefix, account, id)))
    return { cancelled: true };
  for (let tries = 0; tries < HANDING_TRIES; tries++) {
    const state = await queue.getJobState(id);
    if (NOT_STARTED.has(state)) {
      if ((await queue.remove(id)) !== 1) break;
      if (await forgetRemoved(redis, keyPrefix, id, account)) return { cancelled: true };
      break;
    }
    // Admitted to its turn, and not in BullMQ's lists yet: there in a moment.
    if (state !== 'unknown' || account === undefined || !(await beingHanded(redis, keyPrefix, id))) break;
    await sleep(HANDING_WAIT_MS, undefined, 'waiting for a job being handed to BullMQ').done;
  }
  return { cancelled: false, state: (await outbox.get(key))?.state };
}

/**
 * The keys of the jobs without an account that are not final: waiting, delayed or active. (The jobs
 * of an account, keyed per account, are listed by account: `accountStates`.)
 */
export async function openKeys(queue: Queue): Promise<string[]> {
  const ids = await queue.getRanges(
    ['waiting', 'prioritized', 'waiting-children', 'delayed', 'active'],
    0,
    -1,
  );
  return ids.filter((id) => !isAccountJobId(id) && id !== ANCHOR_ID).map(keyOfJobId);
}

const FINAL: readonly OutboxState[] = ['delivered', 'failed', 'unknown'];
/** How often `waitFor` reads the keys still open again, by default. */
const RECHECK_MS = 5000;
const OUTCOMES = ['delivered', 'failed', 'unknown'] as const;

/** What `waitFor` needs of its outbox. */
export interface WaitSource {
  on<E extends OutboxEventName>(event: E, listener: OutboxListener<E>): unknown;
  off<E extends OutboxEventName>(event: E, listener: OutboxListener<E>): unknown;
  get(key: string): Promise<OutboxJobStatus | undefined>;
}

function statusOf<E extends (typeof OUTCOMES)[number]>(name: E, event: OutboxEvents[E]): OutboxJobStatus {
  return 'result' in event ? { state: name, result: event.result } : { state: name, error: event.error };
}

/**
 * Waits for `keys` (or every job not final now) to end. Listens first, then reads each key once: a key
 * that ends after the listener came is heard, one that ended before is read final. Every part of the
 * wait, its reads of Redis included, runs under one call control of `calls`: the signal, the
 * deadline and the outbox's `close()` end it at once, whether Redis answers or not.
 */
export async function waitForJobs(
  source: WaitSource,
  listOpen: () => Promise<string[]>,
  keys: Iterable<string> | 'all',
  options: OutboxWaitOptions | undefined,
  calls: CallRegistry,
): Promise<Map<string, OutboxJobStatus>> {
  const { timeoutMs, signal, recheckMs = RECHECK_MS } = (options ?? {}) as OutboxWaitOptions;
  for (const [name, value] of [
    ['timeoutMs', timeoutMs],
    ['recheckMs', recheckMs],
  ] as const) {
    if (value !== undefined && !(typeof value === 'number' && value > 0 && value < 2 ** 31)) {
      throw new OAValidationError(`${name}: must be a number of ms, more than 0`, [
        { path: [name], message: 'must be a number of ms, more than 0' },
      ]);
    }
  }
  const wanted = keys === 'all' ? undefined : checkKeys(keys);
  const control = calls.start('outbox.waitFor', { signal, timeoutMs });

  const heard = new Map<string, OutboxJobStatus>();
  const results = new Map<string, OutboxJobStatus>();
  let open: Set<string> | undefined;
  let wake: (() => void) | undefined;
  const listeners = OUTCOMES.map((name) => {
    const listener = (event: OutboxEvents[typeof name]) => {
      const status = statusOf(name, event as never);
      if (!open) heard.set(event.key, status);
      else if (open.delete(event.key)) {
        results.set(event.key, status);
        if (open.size === 0) wake?.();
      }
    };
    source.on(name, listener);
    return [name, listener] as const;
  });
  const pending = new Set<string>();
  try {
    if (control.stopped) throw control.error('starting');
    // Each read of Redis is waited for only while the call runs: a paused Redis cannot hold it.
    const read = (batch: string[]) =>
      control.wait(Promise.all(batch.map((key) => source.get(key))), 'reading its keys');
    if (wanted === undefined) {
      for (const key of await control.wait(listOpen(), 'listing the open jobs')) pending.add(key);
    } else {
      const missing: string[] = [];
      for (let i = 0; i < wanted.length; i += 100) {
        const batch = wanted.slice(i, i + 100);
        const statuses = await read(batch);
        batch.forEach((key, j) => {
          const status = statuses[j];
          if (status === undefined) missing.push(key);
          else if (FINAL.includes(status.state)) results.set(key, status);
          else pending.add(key);
        });
      }
      if (missing.length > 0) {
        const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ', ...' : '');
        throw new OAValidationError(
          `outbox.waitFor: ${missing.length} key(s) not known (never added, or past their retention): ${shown}`,
          missing.map((key) => ({ path: ['keys', key], message: 'not known' })),
        );
      }
    }
    for (const key of pending) {
      const status = heard.get(key);
      if (status) {
        results.set(key, status);
        pending.delete(key);
      }
    }
    open = pending;
    while (pending.size > 0) {
      // Until an event ends the last key, or `recheckMs` passes; the call's stop ends it too.
      const tick = sleep(recheckMs, control.signal, 'waiting', () => control.error('waiting'));
      wake = tick.wake;
      await tick.done;
      if (pending.size === 0) break;
      // The record, read again: an outcome whose event was missed is found there, and a key no longer
      // known (cancelled, or past its retention) stops being waited for.
      const keys = [...pending];
      for (let i = 0; i < keys.length && pending.size > 0; i += 100) {
        const batch = keys.slice(i, i + 100);
        let statuses: (OutboxJobStatus | undefined)[];
        try {
          statuses = await read(batch);
        } catch (error) {
          // A failed read (Redis away for a moment) is tried again at the next tick.
          if (control.stopped) throw error;
          break;
        }
        batch.forEach((key, j) => {
          const status = statuses[j];
          if (status && !FINAL.includes(status.state)) return;
          if (pending.delete(key) && status) results.set(key, status);
        });
      }
    }
    return results;
  } catch (error) {
    const reason = control.stopped;
    if (reason === undefined) throw error;
    if (reason === 'aborted') throw new OAAbortError('outbox.waitFor was aborted', { cause: signal?.reason });
    if (reason === 'closed') throw new OAConnectionError('outbox.waitFor: the outbox was closed');
    throw new OATimeoutError(
      open === undefined
        ? `outbox.waitFor: its timeoutMs of ${timeoutMs} ms ran out while reading its keys`
        : `outbox.waitFor: ${pending.size} of ${results.size + pending.size} keys still open after ${timeoutMs} ms`,
    );
  } finally {
    control.end();
    for (const [name, listener] of listeners) source.off(name, listener as never);
  }
}

function checkKeys(keys: unknown): string[] {
  if (
    keys === null ||
    typeof keys === 'string' ||
    typeof (keys as Iterable<unknown>)?.[Symbol.iterator] !== 'function'
  ) {
    throw new OAValidationError("waitFor needs keys (an array of strings) or 'all'", []);
  }
  const list = [...(keys as Iterable<unknown>)];
  list.forEach((key, i) => {
    if (typeof key !== 'string' || key === '') {
      throw new OAValidationError('waitFor: each key must be a non-empty string', [
        { path: ['keys', i], message: 'must be a non-empty string' },
      ]);
    }
    checkKeyText(key, ['keys', i]);
  });
  return [...new Set(list as string[])];
}
