/** A throwaway redis-server for the tests: a free port, a temp dir, no persistence unless asked. */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { redisClient } from './redis-client.js';
import { ON_CLUSTER, startRedisCluster } from './redis-cluster.js';

export { redisClient } from './redis-client.js';
export { ON_CLUSTER } from './redis-cluster.js';

/** The redis-server binary: `REDIS_SERVER`, else the first on PATH, else undefined. */
export function findRedisServer(): string | undefined {
  const candidates = process.env.REDIS_SERVER
    ? [process.env.REDIS_SERVER]
    : (process.env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'redis-server'));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

export const REDIS_SERVER = findRedisServer();
if (!REDIS_SERVER) {
  console.warn(
    'test/redis: skipped, no redis-server binary (apt-get install redis-server, or set REDIS_SERVER)',
  );
}

export interface RedisServer {
  url: string;
  port: number;
  stop(): Promise<void>;
  /**
   * Shuts it down (SIGTERM: it writes its append-only file first) and starts it again on the same port
   * and data dir; clients see their connection drop and reconnect.
   */
  restart(): Promise<void>;
  /** Shuts it down (SIGTERM) and leaves it down, until `start()`: clients see their connection drop. */
  shutdown(): Promise<void>;
  /** Starts it again after `shutdown()`, on the same port and data dir. */
  start(): Promise<void>;
}

/** How to start it. */
export interface RedisServerOptions {
  /** `appendonly yes` with `appendfsync always`: every write is on disk before it is acknowledged. */
  appendonly?: boolean;
  /** More command-line options, e.g. `['--cluster-enabled', 'yes']`. */
  args?: readonly string[];
}

/** One redis-server process on `port`, resolved once it accepts connections (within 10 s). */
export function startOnce(
  binary: string,
  port: number,
  dir: string,
  appendonly: boolean,
  args: readonly string[] = [],
): Promise<ChildProcess> {
  const persistence = appendonly
    ? ['--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir, ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start:\n${output}`)), 10_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners('data');
        child.stdout?.resume();
        resolve(child);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('exit', (code) => fail(new Error(`redis-server exited (${code}):\n${output}`)));
  });
}

/** Starts redis-server on a free loopback port; retries on another port if that one was taken meanwhile. */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const binary = REDIS_SERVER;
  if (!binary) throw new Error('no redis-server binary');
  const appendonly = options.appendonly ?? false;
  const dir = mkdtempSync(join(tmpdir(), 'oa-redis-'));
  let lastError: unknown;
  for (let tries = 0; tries < 3; tries++) {
    const port = await freePort();
    try {
      let child = await startOnce(binary, port, dir, appendonly, options.args);
      child.removeAllListeners('exit');
      const start = async () => {
        child = await startOnce(binary, port, dir, appendonly, options.args);
        child.removeAllListeners('exit');
      };
      const exit = (signal: NodeJS.Signals) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill(signal);
        });
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        stop: async () => {
          await exit('SIGKILL');
          rmSync(dir, { recursive: true, force: true });
        },
        restart: async () => {
          await exit('SIGTERM');
          await start();
        },
        shutdown: () => exit('SIGTERM'),
        start,
      };
    } catch (error) {
      lastError = error;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw lastError;
}

/**
 * A throwaway Redis of a test's own, to stop, restart or shut down as it likes: a single redis-server
 * ({@link startRedisServer}), or with `OA_TEST_REDIS=cluster` a Redis Cluster of 3 masters with a
 * replica each ({@link startRedisCluster}, with the same options on every node), whose methods act on
 * every node and whose `url` names them all (connect the test's own client with `redisClient(url)`).
 * Every Redis-backed test file starts its Redis here or with {@link useRedisServer}: `.ci/run` runs
 * those files a second time on a cluster.
 */
export function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
  // No persistence unless asked, as a single redis-server.
  const appendonly = options.appendonly ?? false;
  return ON_CLUSTER ? startRedisCluster({ ...options, appendonly }) : startRedisServer(options);
}

/**
 * One redis-server for a describe block, with a connection of the test's own: started before its
 * tests, emptied after each (after the block's own afterEach hooks), stopped after all. With
 * `OA_TEST_REDIS=cluster`, a Redis Cluster of 3 masters with a replica each instead (see
 * `startRedisCluster`): `server.url` names every node, and `redis` acts on every master where a
 * test means the whole Redis (`flushall`, `keys`, `CLIENT PAUSE`).
 */
export function useRedisServer(): { readonly server: RedisServer; readonly redis: Redis } {
  let server: RedisServer | undefined;
  let redis: Redis | undefined;
  beforeAll(async () => {
    server = await startRedis();
    redis = redisClient(server.url);
    // On a cluster: connected to every master before a test (or its afterEach's flushall) uses it.
    if (ON_CLUSTER) await redis.ping();
  });
  afterAll(async () => {
    await redis?.quit();
    await server?.stop();
  });
  afterEach(async () => {
    await redis?.flushall();
  });
  return {
    get server() {
      if (!server) throw new Error('the redis-server is not started yet');
      return server;
    },
    get redis() {
      if (!redis) throw new Error('the redis-server is not started yet');
      return redis;
    },
  };
}
