/**
 * `oa-messaging/queue`: sends and inbound events kept in Redis on BullMQ, so that a crash, a deploy or
 * an out-of-memory kill loses nothing. bullmq and ioredis are optional peer dependencies, loaded on
 * first use.
 *
 * @example
 * ```ts
 * import { createOutbox } from 'oa-messaging/queue';
 * const outbox = createOutbox({ connection: { url: 'redis://127.0.0.1:6379' } });
 * await outbox.add('sendText', { user_id, msg }, { key: 'order-123-shipped' });
 * const worker = outbox.work({ client, concurrency: 4 });
 * ```
 *
 * @module oa-messaging/queue
 */
export { type OutboxBoardOptions, outboxBoardAdapters } from './board.js';
export type { OutboxAddResult, OutboxCancelResult, OutboxWaitOptions } from './campaign.js';
export type { QueueConnectionOptions } from './connection.js';
export type {
  OutboxCounts,
  OutboxDeliveredEvent,
  OutboxEventName,
  OutboxEvents,
  OutboxFailedEvent,
  OutboxJobEvent,
  OutboxJobStatus,
  OutboxListener,
  OutboxOrphanedEvent,
  OutboxRetryEvent,
  OutboxState,
  OutboxUnknownEvent,
} from './events.js';
export { createInbox, type Inbox, type InboxOptions, type InboxWorkOptions } from './inbox.js';
export type { InboxTurn } from './inbox-order.js';
export {
  type OnlyWidenedMethods,
  OUTBOX_METHODS,
  type OutboxAddOptions,
  type OutboxEntry,
  type OutboxLooseEntry,
  type OutboxMethod,
  type OutboxParams,
} from './methods.js';
export { createOutbox } from './outbox.js';
export type { SendRecord } from './outbox-redis/record.js';
export type {
  Outbox,
  OutboxAccountOption,
  OutboxAccountStatus,
  OutboxAccountsOptions,
  OutboxCancelledCount,
  OutboxOptions,
  OutboxWorker,
  OutboxWorkOptions,
} from './outbox-types.js';
export type { OutboxError, OutboxJobData } from './outbox-worker.js';
