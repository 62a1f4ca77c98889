/**
 * bullmq, imported on first use: loading `oa-messaging/queue` opens nothing and needs nothing, and an
 * app that never imports this entry never loads it. (ioredis is loaded by `../redis/client.js`.)
 */
import { missingPackage } from '../redis/client.js';

/** The part of bullmq this entry uses. */
export type BullMQ = typeof import('bullmq');

let bullmq: Promise<BullMQ> | undefined;

/** bullmq, imported once; a failed import is tried again on the next call. */
export function loadBullMQ(): Promise<BullMQ> {
  if (!bullmq) {
    const loading = import('bullmq').catch((error: unknown) => {
      bullmq = undefined;
      throw missingPackage('oa-messaging/queue', 'bullmq', error);
    });
    bullmq = loading as Promise<BullMQ>;
  }
  return bullmq;
}
