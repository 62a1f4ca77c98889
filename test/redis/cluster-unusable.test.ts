// A Redis Cluster client the SDK cannot use: a `Cluster` whose options BullMQ refuses is an
// OAConfigError at creation; a node list that never forms a cluster (servers without cluster mode, or
// cluster nodes never joined) is an OAConnectionError at first use, within the usual bounds, that says
// what to check, never a raw ioredis error; nothing is stored or sent.
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAClient, OAConfigError, OAConnectionError } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from './redis-server.js';

const NOT_A_CLUSTER =
  /Redis could not be reached \(.*no node answered as a Redis Cluster node: check the node list, and that the servers run with cluster-enabled yes\)/;
const NOT_FORMED =
  /Redis could not be reached \(.*(Redis Cluster is down|no node answered as a Redis Cluster node)/;

async function failure(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const start = performance.now();
  const error = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - start };
}

describe.skipIf(!REDIS_SERVER)('a Redis Cluster the SDK cannot use', () => {
  const servers: RedisServer[] = [];
  const closing: { close(): Promise<unknown> }[] = [];
  const urlOf = (list: RedisServer[]) => `redis://${list.map((s) => `127.0.0.1:${s.port}`).join(',')}`;
  let plain: string;
  let unjoined: string;

  beforeAll(async () => {
    const started = await Promise.all([
      startRedisServer(),
      startRedisServer(),
      ...[1, 2, 3].map(() => startRedisServer({ args: ['--cluster-enabled', 'yes'] })),
    ]);
    servers.push(...started);
    plain = urlOf(started.slice(0, 2));
    unjoined = urlOf(started.slice(2));
  });
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
  });

  it('a Cluster whose options BullMQ refuses: OAConfigError at creation, saying what to set', () => {
    const nodes = [{ host: '127.0.0.1', port: 1 }];
    const without = new Cluster(nodes, { lazyConnect: true });
    const prefixed = new Cluster(nodes, {
      lazyConnect: true,
      keyPrefix: 'app:',
      redisOptions: { maxRetriesPerRequest: null },
    });
    for (const create of [createOutbox, createInbox]) {
      expect(() => create({ connection: { client: without } })).toThrow(OAConfigError);
      expect(() => create({ connection: { client: without } })).toThrow(
        'must be made with redisOptions: { maxRetriesPerRequest: null } (a Cluster), as BullMQ requires: new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })',
      );
      expect(() => create({ connection: { client: prefixed } })).toThrow(/without keyPrefix/);
    }
    // A Cluster made as docs/redis.md says is taken.
    const fit = new Cluster(nodes, { lazyConnect: true, redisOptions: { maxRetriesPerRequest: null } });
    expect(() => createOutbox({ connection: { client: fit } })).not.toThrow();
  });

  for (const [what, url, reason] of [
    ['servers without cluster mode', () => plain, NOT_A_CLUSTER],
    ['cluster nodes never joined into a cluster', () => unjoined, NOT_FORMED],
  ] as const) {
    it(`${what}: the outbox and the inbox reject OAConnectionError within 5 s, saying why`, async () => {
      const outbox = createOutbox({ connection: { url: url() } });
      const inbox = createInbox({ connection: { url: url() }, order: 'sender' });
      closing.push(outbox, inbox);
      for (const call of [
        () => outbox.add('sendText', { user_id: 'u1', msg: 'hi' }, { key: 'k' }),
        () => inbox.store({ CallbackCommand: 'C2C.CallbackAfterSendMsg' } as never),
      ]) {
        const { error, ms } = await failure(call);
        expect(error).toBeInstanceOf(OAConnectionError);
        expect((error as Error).message).toMatch(reason);
        expect(ms).toBeLessThan(7_000);
      }
    });

    it(`${what}: a send with the coordination fails within seconds, not sent`, async () => {
      const mock = await createMockServer();
      const coordination = createRedisCoordination({ url: url() });
      const client = new OAClient({
        baseUrl: mock.url,
        apiKey: mock.apiKey,
        apiSecret: mock.apiSecret,
        coordination,
        maxRetries: 0,
      });
      closing.push(mock, coordination, client);
      const { error, ms } = await failure(() => client.sendText({ user_id: 'u1', msg: 'hi' }));
      expect(error).toBeInstanceOf(OAConnectionError);
      expect(error).toMatchObject({ deliveryUnknown: false });
      expect((error as Error).message).toMatch(reason);
      expect(ms).toBeLessThan(4_000);
      expect(mock.requests).toEqual([]);
    });
  }
});
