/**
 * The outbox's events: each job's outcome, reported by the worker that ran it once BullMQ has stored
 * the job's new state, to that worker's listeners and, through the queue's BullMQ event stream, to
 * `outbox.on` listeners in any process.
 */
import type { Job, QueueEvents, Worker } from 'bullmq';
import { TypedEvents } from '../core/emitter.js';
import { loggerFor } from '../core/logger.js';
import { OAConfigError } from '../errors.js';
import type { QueueConnection } from './connection.js';
import type { BullMQ, IORedisLike } from './load.js';
import type { OutboxMethod } from './methods.js';
import { type OutboxError, type OutboxJobData, outboxErrorOf, UNKNOWN_REASON } from './outbox-worker.js';

/** What every outbox event names: the job's key and method, and its tries so far. */
export interface OutboxJobEvent {
  /** The app's idempotency key. */
  key: string;
  /** The client method that sends it. */
  method: OutboxMethod;
  /** How many times the job was tried, this try included. */
  attempts: number;
}

/** A job was delivered: the API accepted its send. */
export interface OutboxDeliveredEvent extends OutboxJobEvent {
  /** The API's answer, unwrapped (`'success'`, a broadcast record), as `outbox.get` gives it. */
  result: unknown;
}

/** A job ended `failed` or `unknown`. */
export interface OutboxFailedEvent extends OutboxJobEvent {
  /** Why, as `outbox.get(key).error` gives it. */
  error: OutboxError;
}

/** A try was not sent (429, `JOB_BUSY`, a refused connection...): the job is tried again. */
export interface OutboxRetryingEvent extends OutboxJobEvent {
  /** What failed. */
  error: OutboxError;
  /** How long the job waits (BullMQ's backoff) before its next try, in ms. */
  delayMs: number;
}

/** What an outbox reports, by event name. Events never carry a secret. */
export interface OutboxEvents {
  /** A job was delivered. */
  delivered: OutboxDeliveredEvent;
  /** A try was not sent and the job is tried again after `delayMs`. */
  retrying: OutboxRetryingEvent;
  /**
   * A job failed for good: a verdict of the API, an answer too late to tell (`error.deliveryUnknown`),
   * or its tries ran out.
   */
  failed: OutboxFailedEvent;
  /** A job was handed out again after its worker died with its request in flight: it is not sent again. */
  unknown: OutboxFailedEvent;
}

/** The name of an event of {@link OutboxEvents}. */
export type OutboxEventName = keyof OutboxEvents;

/** A listener of outbox event `E`. */
export type OutboxListener<E extends OutboxEventName> = (event: OutboxEvents[E]) => void;

const NAMES: readonly OutboxEventName[] = ['delivered', 'retrying', 'failed', 'unknown'];

/** The name of the entries this module adds to the queue's BullMQ event stream. */
const STREAM_EVENT = 'oa-outbox';
/** BullMQ's own length for the event stream (`streams.events.maxLen`). */
const STREAM_MAX_LEN = 10_000;

/** The emitter of an outbox or one of its workers, refusing names it does not know. */
export class OutboxEmitter extends TypedEvents<OutboxEvents> {
  constructor() {
    super(loggerFor(undefined, undefined));
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

/**
 * Reports the outcomes of `worker`'s jobs to `local` and to the queue's event stream. The worker's own
 * `completed` and `failed` events come once BullMQ has stored the job's new state, so a listener that
 * reads `outbox.get(key)` finds it. A worker that dies in between reports nothing: events tell what
 * happened, `counts` and `get` are the record.
 */
export function reportOutcomes(
  worker: Worker,
  local: OutboxEmitter,
  redis: () => Promise<IORedisLike>,
  keyPrefix: string,
): void {
  const report = ([name, event]: Outcome) => {
    local.emit(name, event as never);
    const data = JSON.stringify(event);
    redis()
      .then((r) =>
        r.xadd(
          `${keyPrefix}events`,
          'MAXLEN',
          '~',
          STREAM_MAX_LEN,
          '*',
          'event',
          STREAM_EVENT,
          'outcome',
          name,
          'data',
          data,
        ),
      )
      .catch(() => {});
  };
  worker.on('completed', (job: Job<OutboxJobData>, result: unknown) => {
    report(['delivered', { ...about(job), result }]);
  });
  worker.on('failed', (job: Job<OutboxJobData> | undefined, error: Error) => {
    if (!job) return;
    const base = { ...about(job), error: outboxErrorOf(error) };
    if (error.message === UNKNOWN_REASON && error.name === 'UnrecoverableError') report(['unknown', base]);
    // BullMQ's own rule, after its count of the try: retried unless unrecoverable or out of tries.
    else if (error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1)) {
      report(['failed', base]);
    } else report(['retrying', { ...base, delayMs: job.delay }]);
  });
}

function about(job: Job<OutboxJobData>): OutboxJobEvent {
  return { key: job.data.key, method: job.data.method, attempts: job.attemptsMade };
}

/**
 * The `outbox.on` side: one BullMQ `QueueEvents` reader, started with the first listener, delivering the events reported from then on by every worker of the queue.
 */
export class OutboxSubscription {
  readonly #events = new OutboxEmitter();
  #reader: Promise<QueueEvents | undefined> | undefined;
  #closed = false;

  constructor(
    private readonly connection: QueueConnection,
    private readonly name: string,
    private readonly bull: () => Promise<BullMQ>,
  ) {}

  on<E extends OutboxEventName>(name: E, listener: OutboxListener<E>): void {
    if (this.#closed) throw new OAConfigError('the outbox is closed');
    this.#events.on(name, listener);
    this.#reader ??= this.#start();
  }

  off<E extends OutboxEventName>(name: E, listener: OutboxListener<E>): void {
    this.#events.off(name, listener);
  }

  async #start(): Promise<QueueEvents | undefined> {
    // Events from now on: the stream's ids are Redis's clock in ms, this machine's clock is close to it.
    const lastEventId = `${Date.now()}-0`;
    try {
      const bull = await this.bull();
      const redis = await this.connection.commands();
      if (this.#closed) return undefined;
      // BullMQ reads on a duplicate of it (its own, closed with the reader): a blocking read never holds
      // the commands of the outbox or the caller's client.
      const reader = new bull.QueueEvents(this.name, { connection: redis as never, lastEventId });
      // It reconnects by itself and goes on from the last event it read.
      reader.on('error', () => {});
      reader.on(
        STREAM_EVENT as 'error',
        ((args: { outcome?: unknown; data?: unknown }) => {
          const name = args.outcome as OutboxEventName;
          if (!NAMES.includes(name) || typeof args.data !== 'string') return;
          let event: unknown;
          try {
            event = JSON.parse(args.data);
          } catch {
            return;
          }
          this.#events.emit(name, event as never);
        }) as never,
      );
      return reader;
    } catch {
      // A missing bullmq or ioredis is reported by the outbox's other calls; a failed start is retried
      // with the next listener.
      this.#reader = undefined;
      return undefined;
    }
  }

  /** Stops reading; safe to call twice. */
  async close(): Promise<void> {
    this.#closed = true;
    const reader = await this.#reader;
    await reader?.close();
  }
}
