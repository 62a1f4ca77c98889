/** `createInbox`: inbound webhook events stored in Redis before the 200, processed by workers. */
import { createHash, randomUUID } from 'node:crypto';
import { OAConfigError } from '../errors.js';
import { jobTraceOptions } from '../telemetry/jobs.js';
import { dedupeKeyOf } from '../webhook/dedupe.js';
import type { WebhookEvent } from '../webhook/schemas.js';
import { QueueConnection, type QueueConnectionOptions } from './connection.js';
import { rejectUnreachable } from './reach.js';
import { LazyQueue, positiveInt, queueName } from './shared.js';

/** Options of {@link createInbox}. */
export interface InboxOptions {
  /** Where the events are kept. */
  connection: QueueConnectionOptions;
  /**
   * The BullMQ queue's name, shared by every process of the receiver.
   * @default 'oa-inbox'
   */
  name?: string | undefined;
  /**
   * How long a processed event's key is remembered, so that a redelivery is not stored again.
   * @default 604_800_000 (7 days)
   */
  retentionMs?: number | undefined;
  /**
   * How many times the handler is run for one event before the event is left failed (the dead letter,
   * kept until removed, readable in BullMQ's tools); exponential backoff from 1 s between tries.
   * @default 5
   */
  attempts?: number | undefined;
}

/** Options of `inbox.work`. */
export interface InboxWorkOptions {
  /** How many events this worker processes at once. @default 1 */
  concurrency?: number | undefined;
  /** How long an event stays with a worker that died before another worker takes it. @default 30_000 */
  lockDurationMs?: number | undefined;
}

/** Inbound events kept in Redis. See {@link createInbox}. */
export interface Inbox {
  /**
   * Stores one event; resolves once it is in Redis. A function of its own (works unbound), to pass as
   * the webhook handler's `onEvent`: the handler answers 200 only after it resolved. A redelivery (same
   * account, `CallbackCommand`, conversation and `MsgKey`, else `MsgId`: the webhook's dedupe key) is
   * stored once, also after it was processed; two callbacks about one message are two events.
   * Rejects with `OAConnectionError` when Redis cannot be reached (not connected within 5 s, a lost
   * connection, no answer within 5 s) instead of waiting for it: the webhook answers 500 and the OA
   * delivers again.
   */
  readonly store: (event: WebhookEvent, context?: unknown) => Promise<void>;
  /**
   * Runs `handler` on each stored event, the event as stored and read back; a handler that throws is
   * retried, then the event is left failed (the dead letter).
   */
  work(
    handler: (event: WebhookEvent) => unknown,
    options?: InboxWorkOptions,
  ): {
    /** Stops taking events and waits for the handlers running now. */
    close(): Promise<void>;
  };
  /** Closes its workers, its queue and the connections it opened. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * An inbox on BullMQ: `store` keeps each inbound event in Redis before the webhook answers 200, and
 * `work` processes them from any number of processes, so that a receiver that crashes after answering
 * loses nothing. Creating it opens nothing.
 *
 * @example
 * const inbox = createInbox({ connection: { url: 'redis://127.0.0.1:6379' } });
 * app.post('/webhook', createWebhookHandler({ onEvent: inbox.store }));
 * inbox.work(async (event) => { await reply(event); });
 */
export function createInbox(options: InboxOptions): Inbox {
  if (typeof options !== 'object' || options === null) {
    throw new OAConfigError('createInbox needs { connection }');
  }
  const connection = new QueueConnection(options.connection, 'createInbox');
  const name = queueName(options.name, 'oa-inbox');
  const retention = Math.ceil(positiveInt('retentionMs', options.retentionMs, 7 * 86_400_000) / 1000);
  const attempts = positiveInt('attempts', options.attempts, 5);
  const queue = new LazyQueue(connection, name, 'inbox');

  const store = async (event: WebhookEvent) => {
    if (typeof event !== 'object' || event === null) throw new OAConfigError('inbox.store needs an event');
    const key = dedupeKeyOf(event);
    // BullMQ ids may not hold `:`; a hash of the key is one to one in practice and fixed in length.
    const jobId =
      key === undefined ? `e-${randomUUID()}` : `e-${createHash('sha256').update(key).digest('hex')}`;
    const { queue: q } = await queue.open();
    await q.add('event', event, {
      jobId,
      attempts,
      backoff: { type: 'exponential', delay: 1000 },
      removeOnComplete: { age: retention },
      removeOnFail: false,
      // The webhook delivery's trace, continued by the worker that handles the event.
      ...jobTraceOptions('parent'),
    });
  };

  const inbox: Inbox = {
    store,
    work(handler, workOptions = {}) {
      if (typeof handler !== 'function') throw new OAConfigError('inbox.work needs a handler function');
      return queue.worker(
        async () => async (job: { data: WebhookEvent }) => {
          await handler(job.data);
        },
        {
          concurrency: positiveInt('concurrency', workOptions.concurrency, 1),
          lockDurationMs: positiveInt('lockDurationMs', workOptions.lockDurationMs, 30_000),
        },
      );
    },
    async close() {
      if (queue.closed) return;
      await queue.close();
      await connection.close();
    },
  };
  rejectUnreachable(inbox, 'inbox', ['store'], (e) => connection.unreachable(e));
  return inbox;
}
