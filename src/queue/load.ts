/**
 * bullmq and ioredis, imported on first use: loading `oa-messaging/queue` opens nothing and needs
 * nothing, and an app that never imports this entry never loads them.
 */
import { OAConfigError } from '../errors.js';

/** The part of bullmq this entry uses. */
export type BullMQ = typeof import('bullmq');

/** An ioredis client, as far as this entry uses it itself (BullMQ uses the rest). */
export interface IORedisLike {
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  hget(key: string, field: string): Promise<string | null>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hset(key: string, field: string, value: string): Promise<unknown>;
  xadd(key: string, ...args: (string | number)[]): Promise<unknown>;
  time(): Promise<(string | number)[]>;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

const MISSING = (name: string) =>
  `oa-messaging/queue needs the ${name} package, an optional peer dependency: npm install bullmq ioredis`;

let bullmq: Promise<BullMQ> | undefined;

/** bullmq, imported once; a failed import is tried again on the next call. */
export function loadBullMQ(): Promise<BullMQ> {
  if (!bullmq) {
    const loading = import('bullmq').catch((error: unknown) => {
      bullmq = undefined;
      throw new OAConfigError(MISSING('bullmq'), { cause: error });
    });
    bullmq = loading as Promise<BullMQ>;
  }
  return bullmq;
}

type RedisConstructor = new (url: string, options: Record<string, unknown>) => IORedisLike;

/**
 * A new ioredis connection to `url`, as BullMQ needs it: commands wait through a reconnection instead
 * of failing after a few tries (`maxRetriesPerRequest: null`), so a Redis restart only delays the work.
 * `options` replace ioredis options of that (the producer calls' connection gives up instead).
 */
export async function connectRedis(url: string, options: Record<string, unknown> = {}): Promise<IORedisLike> {
  let mod: { default?: unknown; Redis?: unknown };
  try {
    mod = (await import('ioredis')) as { default?: unknown; Redis?: unknown };
  } catch (error) {
    throw new OAConfigError(MISSING('ioredis'), { cause: error });
  }
  const Redis = (mod.Redis ?? mod.default) as RedisConstructor | undefined;
  if (typeof Redis !== 'function') throw new OAConfigError(MISSING('ioredis'));
  const client = new Redis(url, { maxRetriesPerRequest: null, ...options });
  // Without a listener ioredis prints every reconnection failure; commands wait or reject anyway.
  client.on('error', () => {});
  return client;
}
