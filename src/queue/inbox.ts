/** `createInbox`: inbound webhook events stored in Redis before the 200, processed by workers. */
import { createHash, randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { OAConfigError } from '../errors.js';
import { checkConfig, oneOf, optionsOf } from '../schemas/option-checks.js';
import { jobTraceOptions } from '../telemetry/jobs.js';
import { dedupeKeyOf } from '../webhook/dedupe.js';
import type { WebhookEvent } from '../webhook/schemas.js';
import { QueueConnection, type QueueConnectionOptions, queueConnection } from './connection.js';
import { type InboxTurn, runTurn, senderOf, storePending, TURN } from './inbox-order.js';
import { rejectUnreachable } from './reach.js';
import { LazyQueue, QUEUE_RULES, WORK_RULES } from './shared.js';

/** Options of {@link createInbox}. */
export interface InboxOptions {
  /** Where the events are kept. */
  connection: QueueConnectionOptions;
  /**
   * The BullMQ queue's name, shared by every process of the receiver. On a Redis Cluster BullMQ keeps
   * it as `{name}` (a hash tag: one slot per queue), unless it holds a hash tag already.
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
  /**
   * In what order the workers handle the events.
   *
   * - `'none'`: each event is a job of its own, handled as soon as a worker is free, in parallel with
   *   any other: two messages of one user may be handled in either order.
   * - `'sender'`: the message events of one sender (`data.From_Account`, within one account) are
   *   handled one at a time, across every process, in the order the OA sent them: by `MsgTime`, then
   *   `MsgSeq` (a missing one counts as 0), then arrival; different senders run in parallel. `store`
   *   keeps the event in the sender's pending set in Redis (`bull:<name>:oa:{<sender>}:pending`, with
   *   a "seen" marker per event kept `retentionMs`) and adds a job as before, a turn of that sender:
   *   the worker that runs it takes the sender's lock (kept alive while held, lasting `lockDurationMs`
   *   without its holder) and handles that sender's pending events in order until none is left. A
   *   handler that throws is retried in place (exponential backoff from 1 s, `attempts` tries in all)
   *   while the sender's later events wait; then the event goes to the dead letter, a waiting job in
   *   the queue `<name>-dead` that no worker takes (its data the event, its log the error: read it with
   *   BullMQ's tools, `new Queue('<name>-dead').getWaiting()`; `inbox.store(job.data)` after a fix does
   *   not store it again within `retentionMs`, so add it under another MsgKey or handle it by hand),
   *   and the sender's next event is handled. Events without a sender (not a message, no
   *   `From_Account`) are handled as with `'none'`. A worker that died mid-event leaves it to be
   *   handled again (before that sender's later events) once its lock expired. Use one `order` for
   *   every process of a queue: a `'none'` worker handles a turn as a lone event, out of order.
   * @default 'none'
   */
  order?: 'none' | 'sender' | undefined;
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
   * retried, then the event is left failed (the dead letter). With `order: 'sender'`, a message event's
   * handler also gets its sender's {@link InboxTurn}: its fencing token, and `assertHeld()` to call
   * before a side effect (`bot.handle` uses both). A handler that finds the sender lost (the worker
   * stalled past `lockDurationMs`) leaves the event to the worker that took the sender over.
   */
  work(
    handler: (event: WebhookEvent, turn?: InboxTurn) => unknown,
    options?: InboxWorkOptions,
  ): {
    /** Stops taking events and waits for the handlers running now. */
    close(): Promise<void>;
  };
  /** Closes its workers, its queue and the connections it opened. Safe to call twice. */
  close(): Promise<void>;
}

/** What {@link InboxOptions} takes, checked once by `createInbox`. */
const InboxOptionsSchema = optionsOf(
  { connection: queueConnection('createInbox'), ...QUEUE_RULES, order: oneOf(['none', 'sender']) },
  'createInbox needs { connection }',
);

/** What {@link InboxWorkOptions} takes, checked by `inbox.work`. */
const InboxWorkOptionsSchema = optionsOf(WORK_RULES, 'inbox.work: options must be an object');

/**
 * An inbox on BullMQ: `store` keeps each inbound event in Redis before the webhook answers 200, and
 * `work` processes them from any number of processes, so that a receiver that crashes after answering
 * loses nothing. Creating it opens nothing.
 *
 * @example
 * const inbox = createInbox({ connection: { url: 'redis://127.0.0.1:6379' } });
 * app.post('/oa/webhook', createWebhookHandler({ onEvent: inbox.store }));
 * inbox.work(async (event) => { await reply(event); });
 */
export function createInbox(options: InboxOptions): Inbox {
  checkConfig(InboxOptionsSchema, options, 'createInbox');
  const connection = new QueueConnection(options.connection, 'createInbox');
  const name = options.name ?? 'oa-inbox';
  const retention = Math.ceil((options.retentionMs ?? 7 * 86_400_000) / 1000);
  const retentionMs = retention * 1000;
  const attempts = Math.ceil(options.attempts ?? 5);
  const order = options.order ?? 'none';
  const queue = new LazyQueue(connection, name, 'inbox');
  // The dead letter of `order: 'sender'`: a queue nobody works.
  const dead = new LazyQueue(connection, `${name}-dead`, 'inbox');
  const keyPrefix = `bull:${connection.queueName(name)}:`;

  const store = async (event: WebhookEvent) => {
    if (typeof event !== 'object' || event === null) throw new OAConfigError('inbox.store needs an event');
    const key = dedupeKeyOf(event);
    // BullMQ ids may not hold `:`; a hash of the key is one to one in practice and fixed in length.
    const jobId =
      key === undefined ? `e-${randomUUID()}` : `e-${createHash('sha256').update(key).digest('hex')}`;
    const { queue: q } = await queue.open();
    const sender = order === 'sender' ? senderOf(event) : undefined;
    if (sender !== undefined) {
      // Pending first, then its turn: a turn that runs finds it there. A redelivery (already pending
      // or handled) still adds the turn, in case the first delivery's store stopped in between.
      const redis = await connection.producer();
      await storePending(redis, keyPrefix, sender, event, jobId, key !== undefined, retentionMs);
    }
    await q.add(sender === undefined ? 'event' : TURN, event, {
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
      checkConfig(InboxWorkOptionsSchema, workOptions, 'inbox.work');
      const concurrency = Math.ceil(workOptions.concurrency ?? 1);
      const lockDurationMs = Math.ceil(workOptions.lockDurationMs ?? 30_000);
      if (order === 'none') {
        return queue.worker(
          async () => async (job: { data: WebhookEvent }) => {
            await handler(job.data);
          },
          { concurrency, lockDurationMs },
        );
      }
      let closing = false;
      const wakers = new Set<() => void>();
      const settings = {
        queue: name,
        keyPrefix,
        lockTtlMs: lockDurationMs,
        attempts,
        handler,
        deadLetter: async (id: string, event: WebhookEvent, error: unknown) => {
          const { queue: q } = await dead.open();
          const job = await q.add('event', event, { jobId: id });
          const e = error as { name?: unknown; message?: unknown } | undefined;
          await job.log(
            `failed ${attempts} times: ${String(e?.name ?? 'Error')}: ${String(e?.message ?? error)}`,
          );
        },
        closing: () => closing,
        onClosing: (wake: () => void) => {
          wakers.add(wake);
          return () => wakers.delete(wake);
        },
      };
      return queue.worker(
        async (bull) => {
          const redis = await connection.commands();
          return async (job: Job<WebhookEvent>, token?: string) => {
            const sender = job.name === TURN ? senderOf(job.data) : undefined;
            if (sender === undefined) await handler(job.data);
            else await runTurn(bull, redis, job, token, sender, settings);
          };
        },
        {
          concurrency,
          lockDurationMs,
          attach: (worker) => {
            worker.on('closing', () => {
              closing = true;
              for (const wake of wakers) wake();
            });
          },
        },
      );
    },
    async close() {
      if (queue.closed) return;
      await queue.close();
      await dead.close();
      await connection.close();
    },
  };
  rejectUnreachable(inbox, 'inbox', ['store'], (e) => connection.unreachable(e));
  return inbox;
}
