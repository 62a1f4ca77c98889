/**
 * bull-board (`@bull-board/api`, an optional peer) for an outbox: one adapter per BullMQ queue of it,
 * each BullMQ's own adapter plus the jobs waiting for their account's turn, which are in none of
 * BullMQ's lists (see outbox-redis/turns.ts) and so would be neither counted nor listed by it.
 */
import { createRequire } from 'node:module';
import type { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { BaseAdapter } from '@bull-board/api/dist/queueAdapters/base.js';
import type {
  JobCleanStatus,
  JobCounts,
  JobSchedulerRepeatOptions,
  JobStatus,
  MetricsType,
  ObliterateOptions,
  QueueAdapterOptions,
  QueueJob,
  QueueJobOptions,
  Status,
} from '@bull-board/api/dist/types.js';
import type { Job, Queue } from 'bullmq';
import { OAConfigError } from '../errors.js';
import { type BoardQueue, boardQueuesOf } from './board-queues.js';
import { type BullMQ, loadBullMQ } from './load.js';
import { ANCHOR_ID } from './outbox-redis/keys.js';
import { type ParkedRecord, parkedCounts, parkedRecord, parkedRecords } from './outbox-redis/turns.js';
import type { Outbox } from './outbox-types.js';

/** What `outboxBoardAdapters` takes: bull-board's options of a queue adapter, for each of them. */
export type OutboxBoardOptions = {
  [K in keyof QueueAdapterOptions]?: QueueAdapterOptions[K] | undefined;
};

/** The parts of `@bull-board/api` used here. */
interface BoardApi {
  BaseAdapter: typeof BaseAdapter;
  BullMQAdapter: typeof BullMQAdapter;
}

let boardApi: BoardApi | undefined;

/**
 * `@bull-board/api`, loaded on the first call (synchronously: `outboxBoardAdapters` is called where
 * bull-board is set up, and answers at once). Loading `oa-messaging/queue` never loads it.
 */
function loadBoardApi(): BoardApi {
  if (!boardApi) {
    try {
      // The build gives CommonJS its import.meta.url.
      const require = createRequire(import.meta.url);
      const { BaseAdapter } = require('@bull-board/api/dist/queueAdapters/base.js') as BoardApi;
      const { BullMQAdapter } = require('@bull-board/api/bullMQAdapter') as BoardApi;
      boardApi = { BaseAdapter, BullMQAdapter };
    } catch (cause) {
      throw new OAConfigError(
        'outboxBoardAdapters needs the @bull-board/api package (9.x), an optional peer dependency: npm install @bull-board/api',
        { cause },
      );
    }
  }
  return boardApi;
}

/**
 * bull-board's adapters of an outbox: one per BullMQ queue of it (each shard's), for
 * `createBullBoard({ queues })`. Each is bull-board's `BullMQAdapter` for that queue, and also counts
 * and lists the jobs waiting for their account's turn (kept by the outbox outside BullMQ's lists,
 * so BullMQ's adapter alone shows none of them): those due under Waiting, those not yet due under
 * Delayed, after BullMQ's own, as `outbox.counts()` counts them.
 *
 * Such a job is shown as BullMQ stores it (its id `a-<account>/<key>`, its data), and its state
 * on the job's own page is `unknown` (BullMQ finds it in none of its lists). The board's actions go
 * through BullMQ, which does not know these jobs: promote or retry is refused or does nothing, and removing
 * one from the board deletes its hash, after which it is never sent (its turn finds it gone). To stop
 * jobs of an account, use `outbox.cancel` or `outbox.cancelAll`; `readOnlyMode: true` hides the
 * board's actions altogether. The queue is opened on the board's first request, as any call of the
 * outbox opens it.
 *
 * @param outbox An outbox of `createOutbox`.
 * @param options bull-board's options of each adapter (`readOnlyMode`, `displayName`, `prefix`...).
 * @returns The adapters, in shard order: `createBullBoard({ queues: outboxBoardAdapters(outbox), serverAdapter })`.
 * @throws OAConfigError when `outbox` is not one of `createOutbox`, or `@bull-board/api` is not installed.
 *
 * @example
 * ```ts
 * import { createBullBoard } from '@bull-board/api';
 * import { ExpressAdapter } from '@bull-board/express';
 * import { outboxBoardAdapters } from 'oa-messaging/queue';
 *
 * const serverAdapter = new ExpressAdapter().setBasePath('/admin/queues');
 * createBullBoard({ queues: outboxBoardAdapters(outbox, { readOnlyMode: true }), serverAdapter });
 * app.use('/admin/queues', serverAdapter.getRouter());
 * ```
 */
export function outboxBoardAdapters(outbox: Outbox, options: OutboxBoardOptions = {}): BaseAdapter[] {
  const queues = boardQueuesOf(outbox);
  if (!queues) throw new OAConfigError('outboxBoardAdapters needs an outbox of createOutbox');
  const Adapter = adapterClass(loadBoardApi());
  // bull-board's own option type does not take `undefined`: the options given, without those unset.
  const given = Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined),
  ) as Partial<QueueAdapterOptions>;
  return queues.map((queue) => new Adapter(queue, given));
}

let adapterClassMade: ReturnType<typeof makeAdapterClass> | undefined;

function adapterClass(api: BoardApi) {
  adapterClassMade ??= makeAdapterClass(api);
  return adapterClassMade;
}

/** The job statuses of BullMQ 6 in bull-board (BullMQ 6 has no paused state: those jobs are waiting). */
const JOB_STATUSES: JobStatus[] = [
  'active',
  'waiting',
  'waiting-children',
  'prioritized',
  'completed',
  'failed',
  'delayed',
];

/** A job waiting for its account's turn as a BullMQ `Job` (its `Job.fromJSON`), from the outbox's record. */
function jobOf(Job: BullMQ['Job'], queue: Queue, { id, name, data, opts, at }: ParkedRecord): Job {
  const json = { id, name, data, opts: JSON.parse(opts), timestamp: at, delay: 0, priority: 0 };
  return Job.fromJSON(queue, json as never, id);
}

/**
 * A page of the parked jobs of `state`, each made a BullMQ `Job` from the outbox's record of it: what
 * BullMQ is given at its turn.
 */
async function parkedJobs(
  source: BoardQueue,
  queue: Queue,
  state: 'waiting' | 'delayed',
  skip: number,
  take: number,
): Promise<Job[]> {
  const [records, { Job }] = await Promise.all([
    parkedRecords(await source.redis(), source.keyPrefix, state, skip, take),
    loadBullMQ(),
  ]);
  return records.map((record) => jobOf(Job, queue, record));
}

/** The job `id` while it waits for its account's turn, made a BullMQ `Job`; else `undefined`. */
async function parkedJob(source: BoardQueue, queue: Queue, id: string): Promise<Job | undefined> {
  const [record, { Job }] = await Promise.all([
    parkedRecord(await source.redis(), source.keyPrefix, id),
    loadBullMQ(),
  ]);
  return record && jobOf(Job, queue, record);
}

/** How many jobs BullMQ holds in `state`, less the queue's anchor (due in years: the last delayed one). */
async function countWithoutAnchor(queue: Queue, state: 'waiting' | 'delayed'): Promise<number> {
  const anchor = state === 'delayed' && (await queue.getJobState(ANCHOR_ID)) === 'delayed' ? 1 : 0;
  return (await queue.getJobCountByTypes(state)) - anchor;
}

/** BullMQ's jobs less the queue's anchor (outbox-redis/anchor.ts): not one of the outbox's. */
function withoutAnchor<T extends { id?: string | undefined }>(jobs: T[]): T[] {
  return jobs.filter((job) => job.id !== ANCHOR_ID);
}

/** The states a parked job is listed under. */
const isParkedState = (status: JobStatus): status is 'waiting' | 'delayed' =>
  status === 'waiting' || status === 'delayed';

/**
 * The adapter class, made once `@bull-board/api` is loaded: it extends its `BaseAdapter` (so that
 * bull-board treats it as any adapter) and hands each call to a `BullMQAdapter` of the queue, made
 * when the queue is first opened (the outbox opens its queue asynchronously, bull-board asks for an
 * adapter synchronously).
 */
function makeAdapterClass({ BaseAdapter, BullMQAdapter }: BoardApi) {
  return class OutboxBoardAdapter extends BaseAdapter {
    readonly #source: BoardQueue;
    #opening: Promise<{ bull: BullMQAdapter; queue: Queue }> | undefined;
    #opened: BullMQAdapter | undefined;

    constructor(source: BoardQueue, options: Partial<QueueAdapterOptions>) {
      super('bullmq', options);
      this.#source = source;
    }

    /** BullMQ's adapter of the queue, once the queue is open; a failed open is tried again next time. */
    #open(): Promise<{ bull: BullMQAdapter; queue: Queue }> {
      if (!this.#opening) {
        const opening = this.#source.queue().then((queue) => {
          const bull = new BullMQAdapter(queue);
          this.#opened = bull;
          return { bull, queue };
        });
        opening.catch(() => {
          if (this.#opening === opening) this.#opening = undefined;
        });
        this.#opening = opening;
      }
      return this.#opening;
    }

    async #bull(): Promise<BullMQAdapter> {
      return (await this.#open()).bull;
    }

    /** BullMQ's counts, the parked jobs added: due ones waiting, the others delayed. */
    override async getJobCounts(): Promise<JobCounts> {
      const { bull } = await this.#open();
      const redis = await this.#source.redis();
      // Parked first (as `outbox.counts()`): a job leaves `parked` only for BullMQ's lists, so one
      // admitted between the reads is counted twice at worst, never missed.
      const { queue } = await this.#open();
      const parked = await parkedCounts(redis, this.#source.keyPrefix, queue.toKey('delayed'));
      const counts = await bull.getJobCounts();
      return {
        ...counts,
        waiting: (counts.waiting ?? 0) + parked.due,
        // The queue's anchor (outbox-redis/anchor.ts) is BullMQ's delayed job, not one of the outbox's.
        delayed: Math.max(0, (counts.delayed ?? 0) - parked.anchor) + parked.notYet,
      };
    }

    /**
     * BullMQ's jobs of `statuses`, and the parked jobs of `waiting` and `delayed` after them: with one
     * status (a tab of the board), the page `start`..`end` of BullMQ's then the parked ones, as
     * {@link getJobCounts} counts them; with several (the board's "latest"), BullMQ gives each status
     * its own `start`..`end`, and so do the parked ones.
     */
    override async getJobs(statuses: JobStatus[], start = 0, end = -1): Promise<QueueJob[]> {
      const { bull, queue } = await this.#open();
      const parkedStates = statuses.filter(isParkedState);
      if (parkedStates.length === 0) return withoutAnchor(await bull.getJobs(statuses, start, end));
      const last = end < 0 ? Number.POSITIVE_INFINITY : end;
      const size = last - start + 1;
      if (statuses.length > 1) {
        const [theirs, ...parked] = await Promise.all([
          bull.getJobs(statuses, start, end),
          ...parkedStates.map((state) => parkedJobs(this.#source, queue, state, start, size)),
        ]);
        return [...withoutAnchor(theirs), ...parked.flat()] as QueueJob[];
      }
      const state = parkedStates[0] as 'waiting' | 'delayed';
      const theirCount = await countWithoutAnchor(queue, state);
      const theirs =
        start < theirCount
          ? withoutAnchor(await bull.getJobs(statuses, start, Math.min(last, theirCount - 1)))
          : [];
      const parked = await parkedJobs(
        this.#source,
        queue,
        state,
        Math.max(0, start - theirCount),
        size - theirs.length,
      );
      return [...theirs, ...parked] as QueueJob[];
    }

    // What bull-board asks synchronously, known without the queue open.

    override getName(): string {
      return `${this.prefix}${this.#source.name}`;
    }

    override getStatuses(): Status[] {
      return this.#opened?.getStatuses() ?? ['latest', ...JOB_STATUSES];
    }

    override getJobStatuses(): JobStatus[] {
      return this.#opened?.getJobStatuses() ?? [...JOB_STATUSES];
    }

    /** The queue's BullMQ name (bull-board's flows ask it of an adapter of type `bullmq`). */
    getQueueName(): string {
      return this.#source.name;
    }

    /** `bull:<name>` (bull-board's flows ask it of an adapter of type `bullmq`). */
    getQueueQualifiedName(): string {
      return this.#source.keyPrefix.slice(0, -1);
    }

    /** The key of one of the queue's sets, e.g. `bull:oa-outbox:completed`. */
    getQueueKey(set: string): string {
      return `${this.#source.keyPrefix}${set}`;
    }

    override getQueueDefaultJobOptions() {
      return this.#opened?.getQueueDefaultJobOptions() ?? {};
    }

    override get supportsJobSchedulerUpdate(): boolean {
      return true;
    }

    override get supportsJobSchedulerRun(): boolean {
      return true;
    }

    override get supportsGlobalRateLimit(): boolean {
      return this.#opened?.supportsGlobalRateLimit ?? false;
    }

    // Everything else: BullMQ's adapter of the queue, as it is.

    async getFlowProducer() {
      return (await this.#bull()).getFlowProducer();
    }

    async getClient() {
      return (await this.#bull()).getClient();
    }

    override async getWorkers() {
      return (await this.#bull()).getWorkers();
    }

    override async getRedisInfo() {
      return (await this.#bull()).getRedisInfo();
    }

    override async getDatastoreStats() {
      return (await this.#bull()).getDatastoreStats();
    }

    override async clean(status: JobCleanStatus, graceTimeMs: number) {
      return (await this.#bull()).clean(status, graceTimeMs);
    }

    override async addJob(name: string, data: unknown, options: QueueJobOptions) {
      return (await this.#bull()).addJob(name, data, options);
    }

    /** BullMQ's job, or the one waiting for its account's turn, made from the outbox's record. */
    override async getJob(id: string) {
      const { bull, queue } = await this.#open();
      return (await bull.getJob(id)) ?? parkedJob(this.#source, queue, id);
    }

    override async getJobLogs(id: string) {
      return (await this.#bull()).getJobLogs(id);
    }

    override async getMetrics(type: MetricsType, start?: number, end?: number) {
      return (await this.#bull()).getMetrics(type, start, end);
    }

    override async isPaused() {
      return (await this.#bull()).isPaused();
    }

    override async pause() {
      return (await this.#bull()).pause();
    }

    override async resume() {
      return (await this.#bull()).resume();
    }

    override async empty() {
      return (await this.#bull()).empty();
    }

    override async obliterate(opts?: ObliterateOptions) {
      return (await this.#bull()).obliterate(opts);
    }

    override async promoteAll() {
      return (await this.#bull()).promoteAll();
    }

    override async getArmedJobSchedulerId(job: QueueJob) {
      return (await this.#bull()).getArmedJobSchedulerId(job);
    }

    override async removeJobScheduler(id: string) {
      return (await this.#bull()).removeJobScheduler(id);
    }

    override async getJobSchedulers() {
      return (await this.#bull()).getJobSchedulers();
    }

    override async getJobSchedulersCount() {
      return (await this.#bull()).getJobSchedulersCount();
    }

    override async updateJobScheduler(id: string, repeat: JobSchedulerRepeatOptions) {
      return (await this.#bull()).updateJobScheduler(id, repeat);
    }

    override async runJobSchedulerNow(id: string) {
      return (await this.#bull()).runJobSchedulerNow(id);
    }

    override async getGlobalConcurrency() {
      return (await this.#bull()).getGlobalConcurrency();
    }

    override async setGlobalConcurrency(concurrency: number) {
      return (await this.#bull()).setGlobalConcurrency(concurrency);
    }

    override async getConfiguredRateLimit() {
      return (await this.#bull()).getConfiguredRateLimit();
    }

    override async setConfiguredRateLimit(limit: { max: number; duration: number }) {
      return (await this.#bull()).setConfiguredRateLimit(limit);
    }

    override async removeConfiguredRateLimit() {
      return (await this.#bull()).removeConfiguredRateLimit();
    }

    override async getActiveRateLimitTtl() {
      return (await this.#bull()).getActiveRateLimitTtl();
    }

    override async releaseActiveRateLimit() {
      return (await this.#bull()).releaseActiveRateLimit();
    }
  };
}
