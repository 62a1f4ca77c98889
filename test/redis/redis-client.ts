/**
 * A connection of the test's own to the Redis of a test (or of a child process of a test): a single
 * Redis, or the cluster `OA_TEST_REDIS=cluster` starts. Free of vitest, for child processes too.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { queueKeyName } from '../../src/redis/keys.js';

/** The ports of a Redis Cluster's URL (several nodes), or `undefined` for one Redis. */
function clusterPorts(url: string): number[] | undefined {
  const hosts = /^rediss?:\/\/(?:[^@/]*@)?([^/?#]+)/.exec(url)?.[1]?.split(',') ?? [];
  return hosts.length > 1 ? hosts.map((host) => Number(host.split(':').pop())) : undefined;
}

/**
 * A connection of the test's own to `url` with ioredis `options`: a `Redis`, or for a cluster's URL
 * (several nodes) a `Cluster` typed as the `Redis` the tests use, whose `flushall` and `CLIENT
 * PAUSE`/`UNPAUSE` act on every node and `keys` on every master, and whose keys named in the layout of a single Redis
 * (`bull:<queue>:...`) are read where the SDK keeps them on a cluster (`bull:{<queue>}:...`, see
 * `queueKeyName`).
 */
export function redisClient(url: string, options: RedisOptions = {}): Redis {
  const ports = clusterPorts(url);
  if (!ports) return new Redis(url, options);
  const { lazyConnect, ...perNode } = options;
  const nodes = ports.map((port) => ({ host: '127.0.0.1', port }));
  const relaid = (arg: unknown) =>
    typeof arg === 'string'
      ? arg.replace(/^bull:([^:{}]+):/, (_, name: string) => `bull:${queueKeyName(name, true)}:`)
      : arg;
  const admin = new (class extends Cluster {
    override sendCommand(command: { name: string; args: unknown[] }, ...rest: unknown[]) {
      command.args = command.args.map(relaid);
      return (super.sendCommand as (...args: unknown[]) => unknown).call(this, command, ...rest);
    }
  })(nodes, { redisOptions: perNode, lazyConnect: lazyConnect ?? false }) as unknown as Cluster;
  const onEvery = async <T>(run: (node: Redis) => Promise<T>, role: 'master' | 'all' = 'master') =>
    Promise.all(admin.nodes(role).map(run));
  const call = admin.call.bind(admin) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(admin, {
    // Every node, not only those this client last saw as masters: a restart of the cluster may have
    // swapped a master and its replica since. A replica answers READONLY; its master's flush reaches it.
    flushall: async () => {
      await onEvery(
        (node) =>
          node.flushall().catch((error: unknown) => {
            if (!String(error).includes('READONLY')) throw error;
          }),
        'all',
      );
      return 'OK';
    },
    keys: async (pattern: string) => (await onEvery((node) => node.keys(relaid(pattern) as string))).flat(),
    call: async (name: string, ...args: (string | number)[]) => {
      // Every node too, for the same reason: pausing a replica as well changes nothing for a test.
      if (name.toUpperCase() === 'CLIENT' && /^(UN)?PAUSE$/i.test(String(args[0]))) {
        return (await onEvery((node) => node.call(name, ...args), 'all'))[0];
      }
      return call(name, ...args);
    },
  });
  return admin as unknown as Redis;
}
