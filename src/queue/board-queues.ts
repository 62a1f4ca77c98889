/**
 * The BullMQ queues of each outbox, for its bull-board adapters (`board.ts`): registered by
 * `createOutbox`, kept out of the `Outbox` interface (no public API), and let go with the outbox.
 */
import type { Queue } from 'bullmq';
import type { IORedis } from '../redis/client.js';

/** One BullMQ queue of an outbox (a shard's, or its only one), and where its own keys are. */
export interface BoardQueue {
  /** The queue's BullMQ name (`{name}` on a Redis Cluster). */
  readonly name: string;
  /** The queue's key prefix (`bull:<name>:`): the outbox's own keys are under it. */
  readonly keyPrefix: string;
  /** The queue, opened on first use (as every call of the outbox opens it). */
  queue(): Promise<Queue>;
  /** The outbox's producer connection: it gives up on a lost connection instead of waiting. */
  redis(): Promise<IORedis>;
}

const registered = new WeakMap<object, readonly BoardQueue[]>();

/** Records the queues of `outbox`, in shard order. */
export function registerBoardQueues(outbox: object, queues: readonly BoardQueue[]): void {
  registered.set(outbox, queues);
}

/** The queues of an outbox of `createOutbox`, or `undefined` for anything else. */
export function boardQueuesOf(outbox: unknown): readonly BoardQueue[] | undefined {
  return typeof outbox === 'object' && outbox !== null ? registered.get(outbox) : undefined;
}
