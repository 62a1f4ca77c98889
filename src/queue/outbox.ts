/** `createOutbox`: sends queued in Redis (BullMQ), each delivered at most once across crashes. */
import type { Job } from 'bullmq';
import * as z from 'zod/mini';
import type { OAClient } from '../client.js';
import { CallRegistry } from '../core/call-control.js';
import { OAValidationError } from '../errors.js';
import { checkConfig, checked, isObject, optionsOf } from '../schemas/option-checks.js';
import { jobTraceOptions } from '../telemetry/jobs.js';
import { boardQueuesOf, registerBoardQueues } from './board-queues.js';
import { cancelJob, openKeys, type WaitSource, waitForJobs } from './campaign.js';
import { QueueConnection, queueConnection } from './connection.js';
import {
  type OutboxCounts,
  OutboxEmitter,
  type OutboxJobEvent,
  type OutboxJobStatus,
  type OutboxState,
  OutboxSubscription,
  reportOutcomes,
} from './events.js';
import {
  checkEntry,
  checkKeyText,
  jobIdOf,
  keyOfJobId,
  type OutboxEntry,
  type OutboxLooseEntry,
} from './methods.js';
import { countsOf, operations } from './operate.js';
import { anchorQueue } from './outbox-redis/anchor.js';
import { recordKey } from './outbox-redis/keys.js';
import {
  countActive,
  countUnknown,
  FIELD,
  isOrphaned,
  markEnd,
  type RecordPlace,
  recordTtl,
} from './outbox-redis/record.js';
import {
  accountStates,
  Dispatcher,
  parkedCounts,
  parkedState,
  pauseAccount,
  release,
} from './outbox-redis/turns.js';
import { shardedOutbox, shardName } from './outbox-shards.js';
import { type CheckedEntry, outboxStore } from './outbox-store.js';
import type {
  Outbox,
  OutboxAccountOption,
  OutboxOptions,
  OutboxWorker,
  OutboxWorkOptions,
} from './outbox-types.js';
import {
  endedUnknown,
  holdIfAnchor,
  holdIfHeld,
  holdIfNotMine,
  holdUntilDue,
  type OutboxError,
  type OutboxJobData,
  outboxBackoff,
  outboxProcessor,
} from './outbox-worker.js';
import { rejectUnreachable } from './reach.js';
import { checkedChunks, LazyQueue, QUEUE_RULES, WORK_RULES } from './shared.js';

/** The shards of an outbox on a Redis Cluster, unless `shards` says otherwise. */
const CLUSTER_SHARDS = 8;
const DAY_MS = 86_400_000;
/** `replyReserve`: a tenth of each window is kept for an account's replies while its campaign runs. */
const DEFAULT_REPLY_RESERVE = 0.1;

const OUTBOX_NEEDS = 'createOutbox needs { connection }';
const WORK_NEEDS =
  'outbox.work needs { client } (the OAClient that sends the jobs) or { accounts } (createAccounts), or both';

/** What {@link OutboxOptions} takes, checked once by `createOutbox`. */
const OutboxOptionsSchema = optionsOf(
  {
    connection: queueConnection('createOutbox'),
    ...QUEUE_RULES,
    shards: checked(
      (v) => Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= 1024,
      'must be a whole number from 1 to 1,024',
    ),
    replyReserve: checked(
      (v) => typeof v === 'number' && v >= 0 && v < 1,
      'must be a number from 0 to under 1 (a share of the quota)',
    ),
  },
  OUTBOX_NEEDS,
);

/** What {@link OutboxWorkOptions} takes, checked by `outbox.work`. */
const WorkOptionsSchema = optionsOf(
  {
    client: checked(
      (v) => typeof (v as { sendText?: unknown } | undefined)?.sendText === 'function',
      'must be an OAClient',
    ),
    accounts: checked(
      (v) => typeof (v as { client?: unknown } | undefined)?.client === 'function',
      'must be the accounts of createAccounts',
    ),
    account: checked((v) => typeof v === 'string' && v !== '', 'must be a non-empty string (an account id)'),
    ...WORK_RULES,
  },
  WORK_NEEDS,
)
  .check(
    z.refine(
      (v) => !isObject(v) || v.account === undefined || (v.client !== undefined && v.accounts === undefined),
      { error: "outbox.work: account goes with client (that account's client), not with accounts" },
    ),
  )
  .check(
    z.refine((v) => !isObject(v) || v.client !== undefined || v.accounts !== undefined, {
      error: WORK_NEEDS,
    }),
  );

/**
 * An outbox on BullMQ: `add` stores sends under the app's idempotency key, `work` sends them from any
 * number of processes. A keyed send is delivered at most once, across crashes: a job whose request may
 * have left (handed out again after its worker died with it in flight, or whose call rejected with
 * `deliveryUnknown`) ends `unknown` instead of being sent again.
 * Creating it opens nothing: bullmq and ioredis are loaded and connected on first use.
 *
 * @example
 * const outbox = createOutbox({ connection: { url: 'redis://127.0.0.1:6379' } });
 * await outbox.add('sendText', { user_id, msg: 'Shipped!' }, { key: 'order-123-shipped' });
 * const worker = outbox.work({ client, concurrency: 4 });
 */
export function createOutbox(options: OutboxOptions): Outbox {
  checkConfig(OutboxOptionsSchema, options, 'createOutbox');
  const connection = new QueueConnection(options.connection, 'createOutbox');
  const shards = options.shards ?? (connection.isCluster ? CLUSTER_SHARDS : 1);
  const name = options.name ?? 'oa-outbox';
  if (shards === 1) return outboxOn(connection, options, name, true);
  // Each shard an outbox of its own queue; the producer's and the workers' command connections shared.
  const parts = Array.from({ length: shards }, (_, i) =>
    outboxOn(connection, options, shardName(name, i), false),
  );
  const outbox = shardedOutbox(
    parts,
    (workOptions) => checkConfig(WorkOptionsSchema, workOptions, 'outbox.work'),
    () => connection.close(),
  );
  registerBoardQueues(
    outbox,
    parts.flatMap((part) => boardQueuesOf(part) ?? []),
  );
  return outbox;
}

/**
 * The outbox of the queue `name` on `connection` (its options checked); `close()` closes the connection
 * too when `ownsConnection` (a shard's is closed by its sharded outbox, once every shard is closed).
 */
function outboxOn(
  connection: QueueConnection,
  options: OutboxOptions,
  name: string,
  ownsConnection: boolean,
): Outbox {
  const retentionMs = Math.ceil(options.retentionMs ?? 7 * DAY_MS);
  const retention = Math.ceil(retentionMs / 1000);
  const attempts = Math.ceil(options.attempts ?? 12);
  const replyReserve = options.replyReserve ?? DEFAULT_REPLY_RESERVE;
  const keyPrefix = `bull:${connection.queueName(name)}:`;
  const queue = new LazyQueue(connection, name, 'outbox');
  const open = () => queue.open();
  const subscription = new OutboxSubscription(connection, keyPrefix);
  const place: RecordPlace = { keyPrefix, retentionMs: retention * 1000 };
  // The pending `waitFor` calls, for `close()` to stop.
  const waits = new CallRegistry();

  // The dispatch loops of this process's workers with accounts: woken when a job is added here.
  const dispatchers = new Set<Dispatcher>();

  const store = outboxStore({
    connection,
    queue,
    keyPrefix,
    retention,
    attempts,
    parked: () => {
      for (const dispatcher of dispatchers) dispatcher.wake();
    },
    anchor: async () => anchorQueue((await open()).queue, await connection.producer(), keyPrefix),
  });

  const outbox: Outbox = {
    async add(method, params, addOptions) {
      const checked = { ...checkEntry(method, params, addOptions), params };
      // The send continues the trace that added it.
      return store(
        [[{ ...checked, id: jobIdOf(checked.key, checked.account) }]].values(),
        jobTraceOptions('parent'),
      );
    },

    // Either signature's entries: each is checked here, whatever TypeScript knew of it.
    async addMany(entries: Iterable<OutboxLooseEntry>) {
      if (entries === null || typeof (entries as Iterable<unknown>)?.[Symbol.iterator] !== 'function') {
        throw new OAValidationError('addMany needs an array (or iterable) of entries', []);
      }
      // Each send of a batch is a trace of its own, linked to the one that added it: one trace of
      // 10,000 sends would be unreadable.
      const trace = jobTraceOptions('link');
      const check = (entry: unknown, index: number): CheckedEntry => {
        const e = (entry ?? {}) as Partial<OutboxEntry>;
        const checked = checkEntry(e.method, e.params, e, [index]);
        return { ...checked, params: e.params, id: jobIdOf(checked.key, checked.account) };
      };
      return store(checkedChunks(entries, check), trace);
    },

    work: (workOptions) => workOn({ connection, place, queue, dispatchers, replyReserve }, workOptions),

    on(event, listener) {
      subscription.on(event, listener);
      return outbox;
    },

    off(event, listener) {
      subscription.off(event, listener);
      return outbox;
    },

    async counts(countOptions) {
      const account = accountOption(countOptions, 'counts');
      const { queue: q } = await open();
      const redis = await connection.producer();
      if (account !== undefined) return countsOf((await accountStates(redis, keyPrefix, q, account)).counts);
      // Parked first: a job leaves `parked` only for BullMQ's lists, so one admitted between the reads
      // is counted twice at worst, never missed.
      const parked = await parkedCounts(redis, keyPrefix, q.toKey('delayed'));
      const [c, unknown, [active, orphaned]] = await Promise.all([
        q.getJobCounts('waiting', 'prioritized', 'waiting-children', 'delayed', 'completed', 'failed'),
        countUnknown(redis, keyPrefix, q.toKey('failed')),
        countActive(redis, keyPrefix, q.toKey('active')),
      ]);
      const n = (state: string) => c[state] ?? 0;
      // Parked jobs of accounts are in no list of BullMQ's: those due wait for their account's turn.
      const counts: OutboxCounts = {
        waiting: n('waiting') + n('prioritized') + n('waiting-children') + parked.due,
        // The queue's anchor (outbox-redis/anchor.ts) is BullMQ's delayed job, not the outbox's.
        delayed: Math.max(0, n('delayed') - parked.anchor) + parked.notYet,
        active: active - orphaned,
        delivered: n('completed'),
        failed: n('failed') - unknown,
        unknown,
      };
      if (orphaned > 0) counts.orphaned = orphaned;
      return counts;
    },

    async get(key, getOptions) {
      if (typeof key !== 'string') throw new OAValidationError('get needs a key (a string)', []);
      checkKeyText(key);
      const account = accountOption(getOptions, 'get');
      const { queue: q } = await open();
      const redis = await connection.producer();
      const id = jobIdOf(key, account);
      // A job of an account parked in its lanes first: it leaves them only for BullMQ's lists, read after.
      const parked = account === undefined ? undefined : await parkedState(redis, keyPrefix, account, id);
      if (parked) return { state: parked };
      // The state first, then the job: a job read first and completed just after would be reported
      // `delivered` with the result it did not have yet when it was read.
      const read = await q.getJobState(id);
      // Active without its lock: its worker stopped renewing it (read in one step, so that a job that
      // ended meanwhile, dropping its lock, is not taken for one).
      const bullState =
        read === 'active' && (await isOrphaned(redis, keyPrefix, q.toKey('active'), id)) ? 'orphaned' : read;
      const [job, [end, error]] = await Promise.all([
        read === 'unknown' ? undefined : (q.getJob(id) as Promise<Job | undefined>),
        redis.hmget(recordKey(keyPrefix, id), FIELD.end, FIELD.error),
      ]);
      if (!job) {
        // BullMQ no longer keeps it (its `clean()`), but the outbox's record says how it ended.
        if (end !== 'delivered' && end !== 'failed' && end !== 'unknown') return undefined;
        const status: OutboxJobStatus = { state: end };
        if (error && end !== 'delivered') status.error = JSON.parse(error) as OutboxError;
        return status;
      }
      const status: OutboxJobStatus = { state: stateOf(bullState, end ?? null) };
      if (status.state === 'delivered') status.result = job.returnvalue;
      else if (error) status.error = JSON.parse(error) as OutboxError;
      return status;
    },

    waitFor(keys, waitOptions) {
      const account = accountOption(waitOptions, 'waitFor');
      if (account === undefined) {
        return waitForJobs(outbox, async () => openKeys((await open()).queue), keys, waitOptions, waits);
      }
      const listOpen = async () => {
        const { open: ids } = await accountStates(
          await connection.producer(),
          keyPrefix,
          (await open()).queue,
          account,
          true,
        );
        return ids.map(keyOfJobId);
      };
      return waitForJobs(accountSource(outbox, account), listOpen, keys, waitOptions, waits);
    },

    async cancel(key, cancelOptions) {
      const account = accountOption(cancelOptions, 'cancel');
      return cancelJob(
        accountSource(outbox, account),
        async () => {
          const { queue: q } = await open();
          return [await connection.producer(), q];
        },
        keyPrefix,
        key,
        account,
      );
    },

    ...operations({
      // As every other call: the queue opened first, so that a Redis Cluster is ready before a command.
      redis: async () => {
        await open();
        return connection.producer();
      },
      keyPrefix,
      queue: async () => (await open()).queue,
      cancel: (key, account) => outbox.cancel(key, account === undefined ? undefined : { account }),
    }),

    async close() {
      // A pending waitFor rejects now, its timers cleared: it does not wait for the queue to close.
      waits.closeAll();
      if (queue.closed) return;
      await Promise.all([queue.close(), subscription.close()]);
      if (ownsConnection) await connection.close();
    },
  };
  registerBoardQueues(outbox, [
    {
      name: connection.queueName(name),
      keyPrefix,
      queue: async () => (await open()).queue,
      redis: () => connection.producer(),
    },
  ]);
  rejectUnreachable(
    outbox,
    'outbox',
    [
      'add',
      'addMany',
      'get',
      'counts',
      'cancel',
      'waitFor',
      'accounts',
      'pause',
      'resume',
      'cancelAll',
      'drain',
    ],
    (e) => connection.unreachable(e),
  );
  return outbox;
}

/** What a worker needs of its outbox. */
interface WorkDeps {
  readonly connection: QueueConnection;
  /** Where the outbox's keys are, and how long a final job is kept. */
  readonly place: RecordPlace;
  readonly queue: LazyQueue;
  /** This process's dispatch loops, for `add` to wake: a worker adds its own while it runs. */
  readonly dispatchers: Set<Dispatcher>;
  /** The outbox's `replyReserve`, given to the client with each bulk job's send. */
  readonly replyReserve: number;
}

/** `outbox.work`: a BullMQ worker for the outbox's jobs and, with accounts, a dispatch loop for their turns. */
function workOn(
  { connection, place, queue, dispatchers, replyReserve }: WorkDeps,
  workOptions: OutboxWorkOptions,
): OutboxWorker {
  const { keyPrefix } = place;
  const open = () => queue.open();
  checkConfig(WorkOptionsSchema, workOptions, 'outbox.work');
  const { account } = workOptions;
  const client = account === undefined ? workOptions.client : undefined;
  const accounts =
    account === undefined ? workOptions.accounts : { client: () => workOptions.client as OAClient };
  const concurrency = Math.ceil(workOptions.concurrency ?? 1);
  const events = new OutboxEmitter();
  const senders = {
    client,
    accounts,
    account,
    pause: async (id: string, ms: number) => pauseAccount(await connection.commands(), keyPrefix, id, ms),
  };
  const dispatcher = accounts
    ? new Dispatcher(
        () => connection.commands(),
        keyPrefix,
        async () => (await open()).queue,
        concurrency,
        recordTtl(place),
        account,
      )
    : undefined;
  if (dispatcher) dispatchers.add(dispatcher);
  const running = queue.worker(
    async (bull) => outboxProcessor(bull, await connection.commands(), place, senders, replyReserve),
    {
      concurrency,
      lockDurationMs: Math.ceil(workOptions.lockDurationMs ?? 30_000),
      backoffStrategy: outboxBackoff,
      attach: (worker) => {
        // A job that ended keeps how on its record, with its outcome event; one of an account gives its
        // place in flight back, and its account a turn (and its order group's next job its place in the
        // lane).
        reportOutcomes(worker, events, {
          redis: () => connection.commands(),
          keyPrefix,
          toKey: (name) => worker.toKey(name),
          end: async (r, job, end, told) => {
            const id = job.id as string;
            const { account, orderGroup } = (job.data ?? {}) as Partial<OutboxJobData>;
            if (typeof account !== 'string') await markEnd(r, place, id, end, told);
            else {
              await release(r, keyPrefix, account, id, {
                state: end,
                recordTtlMs: recordTtl(place),
                ordered: typeof orderGroup === 'string',
                told,
              });
            }
            dispatcher?.freed();
          },
        });
      },
      endedUnknown,
      gate: async (bull, job: Job<OutboxJobData>, token) => {
        const redis = await connection.commands();
        await holdIfAnchor(bull, job, token);
        await holdIfNotMine(bull, redis, place, job, token, senders);
        await holdIfHeld(bull, redis, place, job, token);
        await holdUntilDue(bull, redis, place, job, token);
      },
    },
  );
  const worker: OutboxWorker = {
    on(event, listener) {
      events.on(event, listener);
      return worker;
    },
    off(event, listener) {
      events.off(event, listener);
      return worker;
    },
    close: () => {
      if (dispatcher) {
        dispatcher.stop();
        dispatchers.delete(dispatcher);
      }
      return running.close();
    },
  };
  return worker;
}

/** The `account` of a call's options, checked. */
function accountOption(options: OutboxAccountOption | undefined, what: string): string | undefined {
  const account = (options as OutboxAccountOption | undefined)?.account;
  if (account === undefined) return undefined;
  if (typeof account !== 'string' || account === '') {
    throw new OAValidationError(`${what}: account must be a non-empty string (an account id)`, [
      { path: ['account'], message: 'must be a non-empty string (an account id)' },
    ]);
  }
  return account;
}

/** The outbox seen from one account (or none): `get` of its keys, its jobs' events only. */
function accountSource(outbox: Outbox, account: string | undefined): WaitSource {
  const wrapped = new Map<unknown, (event: OutboxJobEvent) => void>();
  return {
    get: (key) => outbox.get(key, { account }),
    on(name, listener) {
      const only = (event: OutboxJobEvent) => {
        if (event.account === account) (listener as (event: OutboxJobEvent) => void)(event);
      };
      wrapped.set(listener, only);
      outbox.on(name, only as never);
    },
    off(name, listener) {
      const only = wrapped.get(listener);
      if (only) outbox.off(name, only as never);
      wrapped.delete(listener);
    },
  };
}

function stateOf(bullState: string, marker: string | null): OutboxState {
  switch (bullState) {
    case 'completed':
      return 'delivered';
    case 'failed':
      return marker === 'unknown' ? 'unknown' : 'failed';
    case 'delayed':
    case 'active':
    case 'orphaned':
      return bullState;
    default:
      return 'waiting';
  }
}

/** An entry of `add` or `addMany` once checked, with its params and its BullMQ job id. */
