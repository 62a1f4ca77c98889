/**
 * ioredis, the one Redis client of `oa-messaging/redis` and `oa-messaging/queue`: the part of it they
 * use, and the one place that imports it (on first use, so that loading either entry opens nothing and
 * needs nothing).
 */
import { OAConfigError } from '../errors.js';

/**
 * What `oa-messaging/redis` needs of a Redis client: Lua scripts, nothing else. An ioredis `Redis` or
 * `Cluster` fits (every script touches keys of one hash slot).
 */
export interface RedisClient {
  /** Runs a Lua script. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** Runs a Lua script by its SHA-1. */
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/**
 * An ioredis `Redis` (or `Cluster`), as far as this SDK uses it itself (BullMQ uses the rest). Only
 * `eval` and `evalsha` are needed of a client passed to `oa-messaging/redis` (see {@link RedisClient});
 * the rest is used on connections this SDK makes, or on a client passed to `oa-messaging/queue`.
 */
export interface IORedis extends RedisClient {
  hget(key: string, field: string): Promise<string | null>;
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
  hset(key: string, field: string, value: string): Promise<unknown>;
  xadd(key: string, ...args: (string | number)[]): Promise<unknown>;
  xread(...args: (string | number)[]): Promise<[string, [string, string[]][]][] | null>;
  time(): Promise<(string | number)[]>;
  info(section: string): Promise<string>;
  /** A Cluster's connections to its nodes of `role`. */
  nodes?(role: 'master'): IORedis[];
  /** `ready` once connected; `wait` (lazyConnect), `connecting`, `reconnecting`, `end`... otherwise. */
  readonly status?: string;
  connect?(): Promise<unknown>;
  /**
   * A new connection with the same options but `options`; on a `Cluster`, `duplicate(nodes, options)`
   * (its own nodes when `nodes` is empty).
   */
  duplicate?(
    ...args: [options?: Record<string, unknown>] | [nodes: unknown[], options: Record<string, unknown>]
  ): IORedis;
  /** Its options: a Cluster's per-node ones are `redisOptions`. */
  readonly options?: { readonly redisOptions?: Record<string, unknown> };
  readonly isCluster?: boolean;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'ready', listener: () => void): unknown;
  once(event: 'ready' | 'end', listener: () => void): unknown;
  off(event: 'ready' | 'end', listener: () => void): unknown;
}

/** ioredis's `Redis` class, as far as it is used here. */
type RedisConstructor = new (url: string, options: Record<string, unknown>) => IORedis;

/** ioredis's `Cluster` class, as far as it is used here. */
type ClusterConstructor = new (
  nodes: { host: string; port: number }[],
  options: Record<string, unknown>,
) => IORedis;

/** The entry point that needs ioredis, and what to install for it. */
const INSTALL = {
  'oa-messaging/redis': 'npm install ioredis',
  'oa-messaging/queue': 'npm install bullmq ioredis',
} as const;

/** An entry point that connects to Redis. */
export type RedisEntry = keyof typeof INSTALL;

/** The error of a missing package, naming the entry that needs it and what to install. */
export function missingPackage(entry: RedisEntry, name: string, cause?: unknown): OAConfigError {
  return new OAConfigError(
    `${entry} needs the ${name} package, an optional peer dependency: ${INSTALL[entry]}`,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * ioredis's `Redis` class, imported on first use. Not cached: a failed import is tried again on the
 * next call (the package may have been installed since), and a loaded module costs nothing to import
 * again.
 */
export async function loadIoredis(entry: RedisEntry): Promise<RedisConstructor> {
  return (await ioredis(entry)).Redis as RedisConstructor;
}

/** ioredis's `Cluster` class, imported on first use (as {@link loadIoredis}). */
export async function loadIoredisCluster(entry: RedisEntry): Promise<ClusterConstructor> {
  return (await ioredis(entry)).Cluster as ClusterConstructor;
}

async function ioredis(entry: RedisEntry): Promise<{ Redis: unknown; Cluster: unknown }> {
  let mod: { default?: { Cluster?: unknown }; Redis?: unknown; Cluster?: unknown };
  try {
    mod = (await import('ioredis')) as typeof mod;
  } catch (error) {
    throw missingPackage(entry, 'ioredis', error);
  }
  const Redis = mod.Redis ?? mod.default;
  const Cluster = mod.Cluster ?? mod.default?.Cluster;
  if (typeof Redis !== 'function' || typeof Cluster !== 'function') throw missingPackage(entry, 'ioredis');
  return { Redis, Cluster };
}
