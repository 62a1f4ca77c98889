/**
 * A throwaway Redis Cluster for the tests: 3 masters with a replica each, on loopback ports, in a temp
 * dir, append-only. `OA_TEST_REDIS=cluster` makes `useRedisServer()` hand one out instead of a single
 * redis-server (its `url` names every node: the SDK connects to it as a cluster).
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../helpers/ports.js';
import { REDIS_SERVER, type RedisServer, type RedisServerOptions, startOnce } from './redis-server.js';

/** Whether the Redis-backed tests run against a Redis Cluster (`OA_TEST_REDIS=cluster`). */
export const ON_CLUSTER = process.env.OA_TEST_REDIS === 'cluster';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A running cluster: a {@link RedisServer} (every method acts on all nodes) with its nodes. */
export interface RedisCluster extends RedisServer {
  /** The nodes' ports, masters first as created (a failover changes who is master). */
  readonly ports: readonly number[];
  /** SIGKILLs one node, which stays down. */
  kill(port: number): Promise<void>;
  /** The ports of the current masters. */
  masters(): Promise<number[]>;
  /**
   * `CLUSTER FAILOVER` on the replica of the master that serves `key`: the replica takes over (the
   * master, paused meanwhile, becomes its replica). Resolves once it is master and the cluster is ok,
   * within 15 s; with the port of the old master and of the new one.
   */
  failover(key: string): Promise<{ from: number; to: number }>;
}

/** redis-cli: beside the redis-server binary, else the first on PATH. */
function redisCli(): string {
  const beside = join(dirname(REDIS_SERVER ?? ''), 'redis-cli');
  try {
    accessSync(beside, constants.X_OK);
    return beside;
  } catch {
    return 'redis-cli';
  }
}

function cli(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      redisCli(),
      ['-h', '127.0.0.1', '-p', String(port), ...args],
      { timeout: 15_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
    );
  });
}

function startNode(
  port: number,
  busPort: number,
  dir: string,
  appendonly: boolean,
  args: readonly string[],
): Promise<ChildProcess> {
  mkdirSync(dir, { recursive: true });
  // biome-ignore format: one option per line pair reads best
  return startOnce(REDIS_SERVER as string, port, dir, appendonly, [
    '--cluster-enabled', 'yes', '--cluster-port', String(busPort),
    '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000', ...args,
  ]);
}

/** Waits (at most `ms`) until every node in `ports` says `cluster_state:ok` and sees `size` masters. */
async function untilOk(ports: readonly number[], ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const infos = await Promise.all(ports.map((port) => cli(port, 'CLUSTER', 'INFO').catch(() => '')));
    if (infos.every((info) => info.includes('cluster_state:ok'))) return;
    if (Date.now() > until) throw new Error(`the cluster is not ok after ${ms} ms:\n${infos.join('\n')}`);
    await sleep(100);
  }
}

/** Waits (at most `ms`) until the node `port` sees `count` replicas: `cluster create` names them later. */
async function untilReplicas(port: number, count: number, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const nodes = await cli(port, 'CLUSTER', 'NODES');
    if (nodes.split('\n').filter((line) => / slave /.test(line.replace('myself,', ''))).length >= count)
      return;
    if (Date.now() > until) throw new Error(`not ${count} replicas after ${ms} ms:\n${nodes}`);
    await sleep(50);
  }
}

/**
 * Starts 3 masters with a replica each (`replicas: 0`: none) and joins them into a cluster, within
 * about 20 s at worst; append-only (`appendfsync always`) unless `appendonly: false`; `args` go to
 * every node. Each node
 * keeps its data dir and `nodes.conf` across `restart()` and `shutdown()`/`start()` (and `kill()`,
 * then `start()`): it comes back with the same role and slots, and, append-only, with its data.
 */
export async function startRedisCluster(
  options: RedisServerOptions & { replicas?: 0 | 1 } = {},
): Promise<RedisCluster> {
  // A free port is free when asked, not for good: another process (a test's server, a connection's
  // ephemeral port) may take it before the node binds it. Then all again, on other ports.
  let lastError: unknown;
  for (let tries = 0; tries < 3; tries++) {
    try {
      return await startClusterOnce(options);
    } catch (error) {
      if (!String(error).includes('Address already in use')) throw error;
      lastError = error;
    }
  }
  throw lastError;
}

async function startClusterOnce({
  appendonly = true,
  args = [],
  replicas = 1,
}: RedisServerOptions & { replicas?: 0 | 1 }): Promise<RedisCluster> {
  if (!REDIS_SERVER) throw new Error('no redis-server binary');
  const root = mkdtempSync(join(tmpdir(), 'oa-cluster-'));
  const ports: number[] = [];
  const busPorts: number[] = [];
  const nodes = 3 * (1 + replicas);
  while (ports.length < 2 * nodes) {
    const port = await freePort();
    if (!ports.includes(port)) ports.push(port);
  }
  busPorts.push(...ports.splice(nodes));
  const children = new Map<number, ChildProcess>();
  const start = async (index: number) => {
    const port = ports[index] as number;
    children.set(
      port,
      await startNode(port, busPorts[index] as number, join(root, String(port)), appendonly, args),
    );
  };
  const exit = (port: number, signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const child = children.get(port);
      if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill(signal);
    });
  const all = (each: (index: number) => Promise<void>) => Promise.all(ports.map((_, i) => each(i)));
  try {
    // Every node started or failed before any is cleaned up: none is left running behind a failure.
    const started = await Promise.allSettled(ports.map((_, i) => start(i)));
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    await cli(
      ports[0] as number,
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    );
    await untilOk(ports);
    // Each master with its replica before a test runs (a restart then brings back the same roles).
    if (replicas > 0) await untilReplicas(ports[0] as number, 3);
  } catch (error) {
    await all((i) => exit(ports[i] as number, 'SIGKILL'));
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const down = new Set<number>();
  const cluster: RedisCluster = {
    url: `redis://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    port: ports[0] as number,
    ports,
    stop: async () => {
      await all((i) => exit(ports[i] as number, 'SIGKILL'));
      rmSync(root, { recursive: true, force: true });
    },
    restart: async () => {
      await cluster.shutdown();
      await cluster.start();
    },
    shutdown: async () => {
      await all((i) => exit(ports[i] as number, 'SIGTERM'));
      for (const port of ports) down.add(port);
    },
    start: async () => {
      await all(async (i) => {
        if (down.delete(ports[i] as number)) await start(i);
      });
      await untilOk(ports.filter((port) => !down.has(port)));
    },
    kill: async (port) => {
      down.add(port);
      await exit(port, 'SIGKILL');
    },
    failover: async (key) => {
      const alive = ports.find((port) => !down.has(port)) as number;
      const slot = Number((await cli(alive, 'CLUSTER', 'KEYSLOT', key)).trim());
      const nodes = (await cli(alive, 'CLUSTER', 'NODES')).split('\n').filter(Boolean);
      const fields = nodes.map((line) => line.split(' '));
      const master = fields.find(
        ([, , flags, , , , , , ...ranges]) =>
          flags?.includes('master') &&
          ranges.some((range) => {
            const [lo, hi = lo] = range.split('-').map(Number);
            return slot >= (lo as number) && slot <= (hi as number);
          }),
      );
      const replica = fields.find(
        ([, , flags, parent]) => flags?.includes('slave') && parent === master?.[0],
      );
      const portOf = (line?: string[]) => Number(/:(\d+)@/.exec(line?.[1] ?? '')?.[1]);
      const [from, to] = [portOf(master), portOf(replica)];
      if (!from || !to) throw new Error(`no master with a replica for slot ${slot}:\n${nodes.join('\n')}`);
      await cli(to, 'CLUSTER', 'FAILOVER');
      const until = Date.now() + 15_000;
      while (!(await cli(to, 'ROLE')).startsWith('master')) {
        if (Date.now() > until) throw new Error(`${to} did not become master within 15 s`);
        await sleep(50);
      }
      await untilOk(ports.filter((port) => !down.has(port)));
      return { from, to };
    },
    masters: async () => {
      const nodes = await cli(ports.find((port) => !down.has(port)) as number, 'CLUSTER', 'NODES');
      return nodes
        .split('\n')
        .filter((line) => / master /.test(line.replace(/myself,/, '')) && !line.includes('fail'))
        .map((line) => Number(/:(\d+)@/.exec(line)?.[1]));
    },
  };
  return cluster;
}
