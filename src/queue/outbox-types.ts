/** The public types of `createOutbox`: its options, the outbox, its workers. */
import type { OAAccounts } from '../accounts/accounts.js';
import type { OAClient } from '../client.js';
import type { OutboxAddResult, OutboxCancelResult, OutboxWaitOptions } from './campaign.js';
import type { QueueConnectionOptions } from './connection.js';
import type { OutboxCounts, OutboxEventName, OutboxJobStatus, OutboxListener } from './events.js';
import type {
  OnlyWidenedMethods,
  OutboxAddOptions,
  OutboxEntry,
  OutboxLooseEntry,
  OutboxMethod,
  OutboxParams,
} from './methods.js';

/** Options of {@link createOutbox}. */
export interface OutboxOptions {
  /** Where the queue lives. */
  connection: QueueConnectionOptions;
  /**
   * The BullMQ queue's name: processes with the same connection and name share one outbox. On a Redis
   * Cluster BullMQ keeps it as `{name}` (a hash tag: one slot per queue), unless it holds a hash tag
   * already.
   * @default 'oa-outbox'
   */
  name?: string | undefined;
  /**
   * How long a delivered, failed or unknown job (and so its key) is kept: adding its key again within
   * this window keeps the one job. Rounded up to whole seconds.
   * @default 604_800_000 (7 days)
   */
  retentionMs?: number | undefined;
  /**
   * How many times a job is run, in all. A run calls the worker's client, which spends its own retry
   * budget first (`maxRetries`, `maxBusyWaitMs`); a job whose client then reports it not sent (a 429 or
   * `JOB_BUSY` past `maxBusyWaitMs`, a refused connection, Redis unreachable) is run again later, with
   * exponential backoff from 1 s and never sooner than a 429's `Retry-After`. Anything else ends it
   * (`delivered`, `failed`, `unknown`).
   * @default 12
   */
  attempts?: number | undefined;
  /**
   * How many BullMQ queues the outbox's jobs are kept in. Each account's jobs live in one of them
   * (chosen from a hash of the account id, the same in every process); jobs without an account in the
   * first, named `name`, the others `name#1` ... On a Redis Cluster each queue is a hash tag of its own,
   * so the accounts spread over the masters, where one queue keeps them all on one master. Everything
   * the outbox does holds per account as with one queue (turns, quota, `bulk`, at most once, keys,
   * `get`, `counts`, `cancel`, `waitFor`, events); `counts()` and `waitFor('all')` add up every queue.
   * A worker with `accounts` runs a BullMQ worker on each queue, `concurrency` jobs each (each BullMQ
   * worker, queue and event reader holds its own Redis connections; the outbox's other calls share
   * one). Give every process of the outbox the same number: a job is looked for in its account's
   * queue, and changing it moves accounts (drain the outbox first, as for a new `name`).
   * @default 8 on a Redis Cluster (a `Cluster` given, or a URL of several nodes), else 1
   */
  shards?: number | undefined;
  /**
   * Replies first: the share of each account's quota (its client's general `rateLimit` window) that
   * the account's `bulk: true` jobs leave to its other sends, from 0 to under 1. A campaign's sends
   * hold at most `max - ceil(replyReserve * max)` slots of the window (at least one), and go at a
   * pace, one per window over those slots, instead of taking the window in a burst as it opens: a
   * reply made while the campaign runs finds a slot at once. With a coordination, every process keeps
   * the same reserve and pace (counted in Redis). The campaign so uses about `1 - replyReserve` of the
   * quota (0.87 to 0.90 measured at 0.1); 0 lets it take every slot (replies then go ahead of its queued
   * sends, but wait for the next slot that comes back: up to a window).
   * @default 0.1
   */
  replyReserve?: number | undefined;
}

/** Options of `outbox.work`: `client`, `accounts`, or both. */
export interface OutboxWorkOptions {
  /**
   * The client that sends the jobs added without `account` (give it `createRedisCoordination` so
   * that every worker shares the quota).
   * @default undefined (jobs without an account are not taken: another worker's)
   */
  client?: OAClient | undefined;
  /**
   * The accounts (`createAccounts`) whose clients send the jobs added with `account`: one worker
   * serves every account, in turns (give `clientOptions.coordination` so that every worker shares
   * each account's quota).
   * @default undefined (jobs with an account are not taken)
   */
  accounts?: Pick<OAAccounts, 'client'> | undefined;
  /**
   * With `client` (not `accounts`): the one account whose jobs this worker sends, with `client` as that
   * account's client (e.g. `oa outbox work --account`). It takes that account's turns only.
   * @default undefined
   */
  account?: string | undefined;
  /**
   * How many jobs this worker runs at once (with `accounts`: an account's jobs waiting for its quota
   * count too, at most 3 per account across every worker), on each of the outbox's queues (`shards`)
   * that it works.
   * @default 1
   */
  concurrency?: number | undefined;
  /**
   * How long a job stays with a worker that stopped renewing its lock (it died, or was stopped) before
   * another running worker takes it, at most: its lock is four fifths of it (renewed every two fifths),
   * and every worker looks for jobs whose lock expired every fifth of it. Between the lock's expiry and
   * that check the job is `orphaned`.
   * @default 30_000
   */
  lockDurationMs?: number | undefined;
}

/** A running worker of an outbox. */
export interface OutboxWorker {
  /**
   * Listens to the outcomes of this worker's jobs, each reported once its state is stored.
   * @example worker.on('failed', (e) => log.warn(`${e.key}: ${e.error.message}`))
   */
  on<E extends OutboxEventName>(event: E, listener: OutboxListener<E>): this;
  /** Removes a listener added with `on`. */
  off<E extends OutboxEventName>(event: E, listener: OutboxListener<E>): this;
  /** Waits for the jobs it is running to end, then stops. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * An outbox: add sends, watch them, run workers. See {@link createOutbox}. `add`, `addMany`, `get` and
 * `counts` reject with `OAConnectionError` when Redis cannot be reached (not connected within 5 s, a
 * lost connection, no answer within 5 s) instead of waiting for it; a rejected `add` may still have
 * been stored (add the key again: it keeps one job). Workers wait through a reconnection.
 */
export interface Outbox {
  /**
   * Queues one send under `key`; resolves once stored, or once found known (a key is stored once), and
   * says which: `{ added: 1, known: 0 }` or `{ added: 0, known: 1 }`.
   */
  add<M extends OutboxMethod>(
    method: M,
    params: OutboxParams<M>,
    options: OutboxAddOptions,
  ): Promise<OutboxAddResult>;
  /**
   * Queues many sends, stored in chunks of 1,000 (no one huge command). An array is checked whole
   * before anything is stored; another iterable is read and stored chunk by chunk (a bad entry stops
   * it there: the chunks before stay stored, and adding them again keeps one job per key). Resolves
   * with how many jobs it stored and which keys were already known. Known is read just before each
   * chunk is stored: a key added by another process at that very moment may be counted added by both.
   *
   * Entries written inline are checked by TypeScript as {@link OutboxEntry}s: the method's name and
   * its params. Entries built in a variable, whose `method` TypeScript widened to `string`, are taken
   * as they are, without `as const` (the next signature).
   */
  // `readonly OutboxEntry[]` beside `Iterable`: an array's bad entry is then reported at the entry
  // (`'sendTxt'` is not a method, did you mean `'sendText'`), not through the iterator's result types,
  // whose error suggests an `exactOptionalPropertyTypes` fix that is not the problem.
  addMany(entries: readonly OutboxEntry[] | Iterable<OutboxEntry>): Promise<OutboxAddResult>;
  /**
   * `addMany` of entries built in a variable, where TypeScript knows `method` only as a `string`
   * ({@link OutboxLooseEntry}): each entry still needs a key and the params of some send method, and
   * its method is checked when it is added (an unknown one is an `OAValidationError`, nothing stored).
   * A method written as a literal is held to the signature above.
   * @example
   * const entries = users.map((u) => ({ method: 'sendText', params: { user_id: u, msg }, key: `promo-${u}` }));
   * await outbox.addMany(entries);
   */
  // `const`: a method written inline stays a literal here (`'sendTxt'`), which OnlyWidenedMethods
  // refuses; without it TypeScript would widen it to string and this signature would take it.
  addMany<const E extends OutboxLooseEntry>(
    entries: (readonly E[] | Iterable<E>) & OnlyWidenedMethods<E>,
  ): Promise<OutboxAddResult>;
  /** Starts a worker in this process. */
  work(options: OutboxWorkOptions): OutboxWorker;
  /**
   * Jobs per state; agrees with `get` over all keys. `active` counts live work only: a job whose worker
   * stopped renewing its lock (it died) is `orphaned` until another worker takes it (within
   * `lockDurationMs`); `orphaned` is there only when some are.
   */
  counts(options?: OutboxAccountOption): Promise<OutboxCounts>;
  /** The job of `key` (of `account`), or `undefined` for a key never added or past its retention. */
  get(key: string, options?: OutboxAccountOption): Promise<OutboxJobStatus | undefined>;
  /**
   * Waits for jobs to end (`delivered`, `failed` or `unknown`) and resolves with their final states, by
   * key, as `get` gives them: `keys` (each must be known: else `OAValidationError`), or `'all'`: every
   * job not final at the call (with `account`, that account's; without, the jobs added without one).
   * A key already final resolves at once; the others as their outcomes are told (the events of `on`).
   * An event can be missed, so the keys still open are also read again every `recheckMs` (5 s): a
   * missed outcome delays the wait by at most that, never holds it; a key cancelled meanwhile is left
   * out of the result. Rejects with `OATimeoutError` (naming how many keys are still
   * open) after `timeoutMs`, with `OAAbortError` when `signal` aborts, with `OAConnectionError` when
   * the outbox is closed: each ends every part of the wait at once, its reads of Redis included (a
   * Redis that does not answer cannot hold it), and clears its timers.
   * @example const states = await outbox.waitFor('all', { timeoutMs: 3_600_000 });
   */
  waitFor(
    keys: Iterable<string> | 'all',
    options?: OutboxWaitOptions & OutboxAccountOption,
  ): Promise<Map<string, OutboxJobStatus>>;
  /**
   * Removes the job of `key` if it is not sent yet (`waiting` or `delayed`): it is never sent, and its key
   * is free again. An `active` job (a worker is sending it) or a final one is kept, and the result
   * says its state.
   */
  cancel(key: string, options?: OutboxAccountOption): Promise<OutboxCancelResult>;
  /**
   * Every account that added a job, busiest first (jobs waiting, delayed and active, then the oldest
   * waiting job): what an operator looks at first. Each account's counts are those of
   * `counts({ account })`, read the same way (one step per job it keeps); accounts none of whose jobs
   * is kept any more are left out (and forgotten). `top`: only the first that many.
   * @example const [busiest] = await outbox.accounts({ top: 1 });
   */
  accounts(options?: OutboxAccountsOptions): Promise<OutboxAccountStatus[]>;
  /**
   * Holds one account: its jobs stay where they are (added ones wait too), none of them starts, and
   * every other account goes on. Jobs of it already started finish: those sending, and the few (at
   * most 3, its cap in flight) a worker took before the pause and that wait in its rate limiter.
   * Until `resume({ account })`, across every worker process and restart (it is kept in Redis).
   */
  pause(options: { account: string }): Promise<void>;
  /** Lets a held account's jobs start again, in their turn. */
  resume(options: { account: string }): Promise<void>;
  /**
   * Cancels every job of one account not started yet (as `cancel` does one): with `bulk: true` only its
   * campaign's (`bulk`) jobs, so its replies go on; with `bulk: false` only the others. Jobs a worker is
   * sending are left to end. Resolves to how many were cancelled.
   * @example await outbox.cancelAll({ account: 'shop-42', bulk: true }) // stop a campaign
   */
  cancelAll(options: { account: string; bulk?: boolean | undefined }): Promise<OutboxCancelledCount>;
  /**
   * Removes every job not started yet: of one `account` (as `cancelAll({ account })`), or of every
   * account and the jobs added without one, those waiting for their account's turn included. Jobs a
   * worker is sending are left to end; final ones stay (`get` reads them). Unlike BullMQ's own
   * `Queue.drain()`, which sees only the jobs in BullMQ's lists, not those waiting for their turn.
   */
  drain(options?: OutboxAccountOption): Promise<OutboxCancelledCount>;
  /**
   * Listens to the outcomes of the jobs of every worker of this outbox, in any process (through the
   * outbox's own event stream, `oa:events` under the queue's prefix, read on a connection of its own
   * opened with the first listener): the
   * outcomes reported from about then on. Events tell what happened as it happens; a listener that was
   * not running misses them, and `counts` and `get` remain the record.
   * @example outbox.on('delivered', (e) => console.log(`${e.key} delivered`))
   */
  on<E extends OutboxEventName>(event: E, listener: OutboxListener<E>): this;
  /** Removes a listener added with `on`. */
  off<E extends OutboxEventName>(event: E, listener: OutboxListener<E>): this;
  /** Closes its workers, its listeners' reader, its queue and the connections it opened. Safe to call twice. */
  close(): Promise<void>;
}

/** Options of {@link Outbox.accounts}. */
export interface OutboxAccountsOptions {
  /** Only the first `top` accounts, busiest first. @default every account */
  top?: number | undefined;
}

/** One account of {@link Outbox.accounts}: its jobs' counts, as `counts({ account })` gives them. */
export type OutboxAccountStatus = OutboxCounts & {
  /** The account id. */
  account: string;
  /** Held by `pause({ account })`: none of its jobs starts until `resume`. */
  paused: boolean;
  /** How long its oldest job due has waited for its turn (ms); `undefined` when none waits. */
  oldestWaitingMs: number | undefined;
};

/** What `cancelAll` and `drain` did. */
export interface OutboxCancelledCount {
  /** How many jobs not started were cancelled. */
  cancelled: number;
}

/** Which account's jobs `get`, `counts`, `cancel` and `waitFor` are about. */
export interface OutboxAccountOption {
  /**
   * The account the keys were added with (`add(..., { key, account })`): keys are unique per account.
   * `counts({ account })` reads each of its jobs kept (one step per job).
   * @default undefined (the jobs added without an account; `counts()`: every job of the outbox)
   */
  account?: string | undefined;
}
