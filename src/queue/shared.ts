/** What the outbox and the inbox share: option rules and their BullMQ queue, opened on first use. */
import type { Queue, Worker } from 'bullmq';
import { OAConfigError } from '../errors.js';
import { atLeastOne, checked } from '../schemas/option-checks.js';
import { tracedProcessor } from '../telemetry/jobs.js';
import type { QueueConnection } from './connection.js';
import { type BullMQ, loadBullMQ } from './load.js';

/** The rules of the options an outbox and an inbox share. */
export const QUEUE_RULES = {
  // BullMQ refuses `:` in a queue name.
  name: checked(
    (v) => typeof v === 'string' && v !== '' && !v.includes(':'),
    'must be a non-empty string without ":"',
  ),
  retentionMs: atLeastOne,
  attempts: atLeastOne,
};

/** The rules of the options of `outbox.work` and `inbox.work`. */
export const WORK_RULES = { concurrency: atLeastOne, lockDurationMs: atLeastOne };

/** The queue of one outbox or inbox: opened on first use, closed once. */
export class LazyQueue {
  #opening: Promise<{ bull: BullMQ; queue: Queue }> | undefined;
  #closed = false;
  readonly #workers = new Set<{ close(): Promise<void> }>();

  constructor(
    private readonly connection: QueueConnection,
    private readonly name: string,
    private readonly what: string,
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** bullmq and the queue; a failed open is tried again on the next call. */
  open(): Promise<{ bull: BullMQ; queue: Queue }> {
    if (this.#closed) return Promise.reject(new OAConfigError(`the ${this.what} is closed`));
    if (!this.#opening) {
      const opening = (async () => {
        const bull = await loadBullMQ();
        // The producer calls' connection (it gives up on a lost connection), ready: BullMQ would wait for
        // a first connection without a bound.
        const redis = await this.connection.producerReady();
        const queue = new bull.Queue(this.connection.queueName(this.name), { connection: redis as never });
        // Without a listener BullMQ prints every reconnection failure; the calls reject themselves.
        queue.on('error', () => {});
        // A queue whose first commands failed (Redis went away again) would fail every call: a new one
        // is made on the next.
        await queue.waitUntilReady().catch(async (error: unknown) => {
          await queue.close().catch(() => {});
          throw error;
        });
        return { bull, queue };
      })();
      opening.catch(() => {
        if (this.#opening === opening) this.#opening = undefined;
      });
      this.#opening = opening;
    }
    return this.#opening;
  }

  /** Starts a BullMQ worker on a connection of its own; `close()` of the result stops it. */
  worker(
    processor: (bull: BullMQ) => Promise<(job: never, token?: string) => Promise<unknown>>,
    options: {
      concurrency: number;
      /** Within how long of a worker's death another worker takes its jobs (see below). */
      lockDurationMs: number;
      /** BullMQ's wait before a job runs again, for the jobs' own backoff type. */
      backoffStrategy?: (attemptsMade: number, type?: string, error?: Error) => number;
      attach?: (worker: Worker) => void;
      /** Whether a job's error means it ended `unknown` (its span and count say so). */
      endedUnknown?: (error: Error) => boolean;
      /** Run before each job, outside its trace: may put the job back (throwing BullMQ's `DelayedError`). */
      gate?: (bull: BullMQ, job: never, token?: string) => Promise<void>;
    },
  ): { close(): Promise<void> } {
    if (this.#closed) throw new OAConfigError(`the ${this.what} is closed`);
    // A dead worker's job is taken once its lock expired and a stalled check ran after that: a lock
    // of 4/5 and a check every 1/5 keep that within lockDurationMs (BullMQ's two-step check, with lock
    // and interval equal, took up to twice as long).
    const stalledIntervalMs = Math.max(1, Math.ceil(options.lockDurationMs / 5));
    const started = (async () => {
      const bull = await loadBullMQ();
      const traced = tracedProcessor(this.what, this.name, await processor(bull), options.endedUnknown);
      const gate = options.gate;
      const process = gate
        ? async (job: never, token?: string) => {
            await gate(bull, job, token);
            return traced(job, token);
          }
        : traced;
      const own = await this.connection.open();
      const worker = new bull.Worker(this.connection.queueName(this.name), process as never, {
        connection: own as never,
        concurrency: options.concurrency,
        lockDuration: Math.max(1, options.lockDurationMs - stalledIntervalMs),
        stalledInterval: stalledIntervalMs,
        // A job handed out again after its worker died is the processor's to classify: BullMQ must
        // not fail it on its own for having stalled.
        maxStalledCount: 1000,
        ...(options.backoffStrategy ? { settings: { backoffStrategy: options.backoffStrategy } } : {}),
      });
      // As for the queue: a failed job keeps its own error; the worker reconnects by itself.
      worker.on('error', () => {});
      options.attach?.(worker);
      return worker;
    })();
    started.catch(() => {});
    let closing: Promise<void> | undefined;
    const running = {
      close: () => {
        this.#workers.delete(running);
        closing ??= started.then(
          (w) => w.close(),
          () => {},
        );
        return closing;
      },
    };
    this.#workers.add(running);
    return running;
  }

  /** Closes its workers (each waits for its running jobs), then the queue; not the connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.all([...this.#workers].map((w) => w.close()));
    const opened = await this.#opening?.catch(() => undefined);
    await opened?.queue.close();
  }
}

/** How many entries of an `addMany` are checked and stored at a time. */
const CHUNK = 1000;

/** `items` in arrays of `size` (the last one shorter), read as they are needed. */
function* chunksOf<T>(items: Iterable<T>, size: number): Generator<T[], void, undefined> {
  let chunk: T[] = [];
  for (const item of items) {
    chunk.push(item);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/**
 * The entries of an `addMany`, each through `check` (given its index), in chunks of {@link CHUNK}: an
 * array is checked whole before the first chunk (nothing is stored from a bad one); any other iterable
 * (a generator over a database cursor) chunk by chunk, so that it never has to be held at once.
 */
export function checkedChunks<T>(
  entries: Iterable<unknown>,
  check: (entry: unknown, index: number) => T,
): Generator<T[], void, undefined> {
  const checked: Iterable<T> = Array.isArray(entries)
    ? entries.map(check)
    : (function* () {
        let index = 0;
        for (const entry of entries) yield check(entry, index++);
      })();
  return chunksOf(checked, CHUNK);
}
