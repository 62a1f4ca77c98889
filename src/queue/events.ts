/**
 * The outbox's events: each job's outcome, reported by the worker that ran it once BullMQ has stored
 * the job's new state, to that worker's listeners and, through the outbox's own event stream (a Redis
 * stream under its keys, not BullMQ's), to `outbox.on` listeners in any process.
 */
import type { Job, Worker } from 'bullmq';
import { TypedEvents } from '../core/events.js';
import { OAConfigError } from '../errors.js';
import type { IORedis } from '../redis/client.js';
import type { QueueConnection } from './connection.js';
import { keyOfJobId, type OutboxMethod } from './methods.js';
import { outboxKeys } from './outbox-redis/keys.js';
import { orphanTry, type Told, tellOutcome } from './outbox-redis/record.js';
import { endedUnknown, type OutboxError, type OutboxJobData, outboxErrorOf, tries } from './outbox-worker.js';

/**
 * Where an outbox job stands. `unknown`: it may have been delivered (its call rejected with
 * `deliveryUnknown`, or its worker died with its request in flight); it is never sent again.
 * `failed`: it certainly was not delivered. `orphaned`: it was active and its worker stopped renewing
 * its lock (it died, or was stopped); a running worker takes it within `lockDurationMs` of that.
 */
export type OutboxState = 'waiting' | 'delayed' | 'active' | 'orphaned' | 'delivered' | 'unknown' | 'failed';

/** One key's job, as `outbox.get` reads it. */
export interface OutboxJobStatus {
  /** Where the job is: `waiting`, `delayed`, `active`, `delivered`, `failed` or `unknown`. */
  state: OutboxState;
  /** The API's answer, unwrapped (`'success'`, a broadcast record), once delivered. */
  result?: unknown;
  /**
   * Why it failed or ended unknown (also the last not-sent failure of a job still retrying); for
   * `unknown`, `deliveryUnknown` is `true` and `record` names the worker that may have sent it.
   */
  error?: OutboxError;
}

/**
 * How many jobs are in each state. `active` is live work only; `orphaned` (jobs whose worker stopped
 * renewing their lock, not taken by another yet) is there only when some are.
 */
export type OutboxCounts = Record<Exclude<OutboxState, 'orphaned'>, number> & {
  /** Active jobs whose lock expired (their worker died): present only when more than 0. */
  orphaned?: number;
};

/** What every outbox event names: the job's key and method, and which try this is. */
export interface OutboxJobEvent {
  /** The app's idempotency key. */
  key: string;
  /** The client method that sends it. */
  method: OutboxMethod;
  /** The try this event is about: 1 for the first; a try cut short by its worker's death counts. */
  attempt: number;
  /** The account of a job added with `account` (keys are unique per account); absent otherwise. */
  account?: string;
}

/** A job was delivered: the API accepted its send. */
export interface OutboxDeliveredEvent extends OutboxJobEvent {
  /** The API's answer, unwrapped (`'success'`, a broadcast record), as `outbox.get` gives it. */
  result: unknown;
}

/** A job ended `failed`: it certainly was not delivered. */
export interface OutboxFailedEvent extends OutboxJobEvent {
  /** Why, as `outbox.get(key).error` gives it. */
  error: OutboxError;
}

/**
 * A job ended `unknown`: it may have been delivered. Either its call rejected with `deliveryUnknown`
 * (a 5xx, a reset or a timeout after the request left), or it was handed out again after its worker
 * died with its request in flight.
 */
export interface OutboxUnknownEvent extends OutboxJobEvent {
  /**
   * As `outbox.get(key).error` gives it: the client's error, or `OAOutcomeUnknown` for a worker that
   * died; `record` names the worker that may have sent it.
   */
  error: OutboxError & {
    /** Always: the request may have reached the API. */
    deliveryUnknown: true;
  };
}

/** A try was not sent (429, `JOB_BUSY`, a refused connection...): the job is tried again. */
export interface OutboxRetryEvent extends OutboxJobEvent {
  /** What failed. */
  error: OutboxError;
  /** How long the job waits (BullMQ's backoff) before its next try, in ms. */
  waitMs: number;
}

/**
 * A job was found orphaned (its worker stopped renewing its lock: it died, or was stopped) and handed
 * out again: a running worker takes it now, and ends it `unknown` if its request may have left, else
 * sends it. Reported by the worker that found it.
 */
export type OutboxOrphanedEvent = OutboxJobEvent;

/** What an outbox reports, by event name. Events never carry a secret. */
export interface OutboxEvents {
  /** A job was delivered. */
  delivered: OutboxDeliveredEvent;
  /** A try was not sent and the job is tried again after `waitMs` (as the client's `retry` event). */
  retry: OutboxRetryEvent;
  /** A job failed for good, certainly not delivered: a verdict of the API, or its tries ran out. */
  failed: OutboxFailedEvent;
  /**
   * A job may have been delivered: its call rejected with `deliveryUnknown`, or it was handed out again
   * after its worker died with its request in flight. It is never sent again.
   */
  unknown: OutboxUnknownEvent;
  /** A job whose worker stopped renewing its lock was found and handed out again (`attempt`: the try cut short). */
  orphaned: OutboxOrphanedEvent;
}

/** The name of an event of {@link OutboxEvents}. */
export type OutboxEventName = keyof OutboxEvents;

/** A listener of outbox event `E`. */
export type OutboxListener<E extends OutboxEventName> = (event: OutboxEvents[E]) => void;

const NAMES: readonly OutboxEventName[] = ['delivered', 'retry', 'failed', 'unknown', 'orphaned'];

/** How long `outbox.on` remembers an outcome it told, to tell each once. */
const TOLD_REMEMBERED_MS = 60_000;
/** How long one blocking read of the stream waits before it reads again. */
const READ_BLOCK_MS = 5000;

/** The emitter of an outbox or one of its workers: refuses names it does not know. */
export class OutboxEmitter extends TypedEvents<OutboxEvents> {
  constructor() {
    // A listener's bug is shown (a process warning goes to stderr by default), never hidden.
    super((name, error) =>
      process.emitWarning(
        `oa-messaging: an outbox '${name}' listener threw: ${error instanceof Error ? error.message : String(error)}`,
        'OAListenerWarning',
      ),
    );
  }

  override on<E extends OutboxEventName>(name: E, listener: OutboxListener<E>): void {
    if (!NAMES.includes(name)) {
      throw new OAConfigError(`an outbox has no event '${String(name)}'; it has ${NAMES.join(', ')}`);
    }
    if (typeof listener !== 'function') throw new OAConfigError('an outbox listener must be a function');
    super.on(name, listener);
  }
}

type Outcome = { [E in OutboxEventName]: [E, OutboxEvents[E]] }[OutboxEventName];

/** Where a worker's outcomes are kept, besides its own listeners. */
export interface OutcomeStore {
  /** The outbox's command connection. */
  redis: () => Promise<IORedis>;
  /** The queue's prefix (`bull:<name>:`). */
  keyPrefix: string;
  /** BullMQ's key of the queue's `name` (`Queue.toKey`). */
  toKey: (name: string) => string;
  /**
   * Keeps how a job ended (`delivered`, or `failed` for one that failed or ended unknown), its outcome
   * event `told` in the same step: one call a job.
   */
  end: (redis: IORedis, job: Job<OutboxJobData>, end: 'delivered' | 'failed', told: Told) => Promise<void>;
}

/**
 * Reports the outcomes of `worker`'s jobs to `local` and to the queue's event stream, and keeps each
 * job's end (`store.end`) with its event. The worker's own `completed` and `failed` events come once
 * BullMQ has stored the job's new state, so a listener that reads `outbox.get(key)` finds it. A worker
 * that dies (or loses Redis) in between reports nothing: events tell what happened, `counts` and `get`
 * are the record.
 */
export function reportOutcomes(worker: Worker, local: OutboxEmitter, store: OutcomeStore): void {
  const { redis, keyPrefix, toKey } = store;
  const report = (job: Job<OutboxJobData>, [name, event]: Outcome, end?: 'delivered' | 'failed') => {
    // Written out before any listener of this worker may change it.
    const told: Told = { name, data: JSON.stringify(event) };
    local.emit(name, event as never);
    redis()
      .then((r) => (end && job.id ? store.end(r, job, end, told) : tellOutcome(r, keyPrefix, told)))
      .catch(() => {});
  };
  worker.on('completed', (job: Job<OutboxJobData>, result: unknown) => {
    report(job, ['delivered', { ...about(job), result }], 'delivered');
  });
  worker.on('failed', (job: Job<OutboxJobData> | undefined, error: Error) => {
    if (!job) return;
    const base = { ...about(job), error: outboxErrorOf(error) };
    if (endedUnknown(error)) {
      report(job, ['unknown', base as OutboxUnknownEvent], 'failed');
    }
    // BullMQ's own rule (Job.shouldRetryJob), after its count of this try: tried again unless
    // unrecoverable or out of tries; the backoff (outboxBackoff) is then the job's delay.
    else if (error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)) {
      report(job, ['failed', base], 'failed');
    } else report(job, ['retry', { ...base, waitMs: job.delay }]);
  });
  // BullMQ's stalled check of this worker moved a job whose lock had expired back to wait.
  worker.on('stalled', (jobId: string) => {
    redis()
      .then((r) => orphanTry(r, keyPrefix, toKey, jobId))
      .then(({ data, attempt }) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(data);
        } catch {}
        const job = { id: jobId, data: parsed, attemptsMade: 0, attemptsStarted: attempt } as unknown;
        report(job as Job<OutboxJobData>, ['orphaned', about(job as Job<OutboxJobData>)]);
      })
      .catch(() => {});
  });
}

function about(job: Job<OutboxJobData>): OutboxJobEvent {
  // attemptsMade leaves out a try whose worker died; the tries started count it (less those put back
  // before they began, as the processor read them).
  const attempt = Math.max(job.attemptsMade, tries.get(job) ?? job.attemptsStarted ?? 0, 1);
  // A job added by another tool may carry anything (the worker failed it): its key then comes from
  // the job id, which `add` makes from the key.
  const data = (job.data ?? {}) as Partial<OutboxJobData>;
  const key = typeof data.key === 'string' ? data.key : keyOfJobId(job.id ?? '');
  const event: OutboxJobEvent = { key, method: data.method as OutboxJobData['method'], attempt };
  if (typeof data.account === 'string') event.account = data.account;
  return event;
}

/** The reader of one run of listeners (from the first `on` to the last `off`). */
interface Reader {
  /** When the first listener came, on this machine's clock. */
  since: number;
  /** Its connection's `close()`, once open. */
  close?: () => Promise<void>;
  /** The wait before trying to start again. */
  timer?: NodeJS.Timeout;
}

/**
 * The `outbox.on` side: one reader of the outbox's event stream while there are listeners (blocking
 * reads on a connection of its own), reading the events reported from the first `on` on by every
 * worker of the queue. A reader that cannot start (Redis refusing) is reported as a process warning and
 * started again with backoff; one whose read fails goes on from the last event it read.
 */
export class OutboxSubscription {
  readonly #events = new OutboxEmitter();
  #reader: Reader | undefined;
  #closed = false;
  /**
   * The outcomes told in the last minute (name, try, key -> when), oldest first: a stream entry can be
   * there twice (a client re-sends the call that added it when a reconnect cut its answer off), and an
   * outcome is told once. A copy comes within moments of the first; a key added again after its
   * retention is news.
   */
  readonly #told = new Map<string, number>();

  constructor(
    private readonly connection: QueueConnection,
    private readonly keyPrefix: string,
  ) {}

  on<E extends OutboxEventName>(name: E, listener: OutboxListener<E>): void {
    if (this.#closed) throw new OAConfigError('the outbox is closed');
    this.#events.on(name, listener);
    if (!this.#reader) {
      const reader: Reader = { since: Date.now() };
      this.#reader = reader;
      void this.#start(reader, 0);
    }
  }

  off<E extends OutboxEventName>(name: E, listener: OutboxListener<E>): void {
    this.#events.off(name, listener);
    // The last listener gone: no reader holds a connection for nobody.
    if (this.#events.size === 0) void this.#stop();
  }

  async #start(reader: Reader, failures: number): Promise<void> {
    let last: string;
    let client: IORedis;
    try {
      const redis = await this.connection.commands();
      // The stream's ids are Redis's clock in ms: the first `on` on that clock, whatever this machine's.
      const [seconds, micros] = (await redis.time()).map(Number);
      const skew = (seconds ?? 0) * 1000 + Math.floor((micros ?? 0) / 1000) - Date.now();
      last = `${reader.since + skew}-0`;
      // Stopped meanwhile (the last `off`, or `close()`, which does not wait for a Redis that is down).
      if (this.#reader !== reader) return;
      // Its own connection: a blocking read never holds the outbox's commands or the caller's client.
      const blocking = await this.connection.blocking();
      reader.close = blocking.close;
      client = blocking.client;
      if (this.#reader !== reader) {
        await blocking.close();
        return;
      }
    } catch (error) {
      if (this.#reader !== reader) return;
      const waitMs = Math.min(30_000, 1000 * 2 ** failures);
      process.emitWarning(
        `oa-messaging: outbox.on cannot read the outbox's events (${error instanceof Error ? error.message : String(error)}); trying again in ${waitMs / 1000} s`,
        'OAListenerWarning',
      );
      reader.timer = setTimeout(() => void this.#start(reader, failures + 1), waitMs);
      reader.timer.unref();
      return;
    }
    const stream = outboxKeys(this.keyPrefix).events;
    let errors = 0;
    while (this.#reader === reader) {
      try {
        const answer = await client.xread('COUNT', 1000, 'BLOCK', READ_BLOCK_MS, 'STREAMS', stream, last);
        errors = 0;
        for (const [, entries] of answer ?? []) {
          for (const [id, fields] of entries) {
            last = id;
            if (this.#reader === reader) this.#told1(fields);
          }
        }
      } catch {
        // The connection reconnects by itself (or was closed by #stop): read again from the last event.
        if (this.#reader !== reader) return;
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * 2 ** errors++)).unref());
      }
    }
  }

  /** Tells one stream entry (`outcome`, name, `data`, JSON) to the listeners, once. */
  #told1(fields: readonly string[]): void {
    const at = (field: string) => {
      const i = fields.indexOf(field);
      return i >= 0 && i % 2 === 0 ? fields[i + 1] : undefined;
    };
    const name = at('outcome') as OutboxEventName;
    const data = at('data');
    if (!NAMES.includes(name) || typeof data !== 'string') return;
    let event: unknown;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    if (this.#toldAlready(name, event)) return;
    this.#events.emit(name, event as never);
  }

  #toldAlready(name: OutboxEventName, event: unknown): boolean {
    const { key, attempt, account } = (event ?? {}) as Partial<OutboxJobEvent>;
    // The same key in two accounts is two jobs: two outcomes.
    const id = JSON.stringify([name, attempt, account ?? null, key]);
    const now = Date.now();
    for (const [old, at] of this.#told) {
      if (now - at < TOLD_REMEMBERED_MS) break;
      this.#told.delete(old);
    }
    if (this.#told.has(id)) return true;
    this.#told.set(id, now);
    return false;
  }

  async #stop(): Promise<void> {
    const reader = this.#reader;
    this.#reader = undefined;
    if (!reader) return;
    clearTimeout(reader.timer);
    await reader.close?.().catch(() => {});
  }

  /** Stops reading; safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#stop();
  }
}
