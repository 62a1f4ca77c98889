// The outbox and the inbox (both orders) on a real Redis Cluster (3 masters, a replica each) with
// their default names, through an ioredis `Cluster` of the user's and through a URL of its nodes: each
// script's keys share a slot (no CROSSSLOT), while different queues and accounts spread over slots.
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createInbox, createOutbox, type Inbox, type Outbox } from '../../src/queue/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { type RedisCluster, startRedisCluster } from '../redis/redis-cluster.js';
import { REDIS_SERVER } from '../redis/redis-server.js';
import { eventWith, listen, post } from '../webhook/support.js';

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

const message = (from: string, seq: number) =>
  eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: `${from} ${seq}` } }], seq, {
    From_Account: from,
  }) as WebhookEvent;

describe.skipIf(!REDIS_SERVER)('a Redis Cluster with the default names', () => {
  let cluster: RedisCluster;
  let admin: Cluster;
  const closing: { close(): Promise<unknown> }[] = [];
  const own = () => {
    const client = new Cluster(
      cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
      { redisOptions: { maxRetriesPerRequest: null } },
    );
    closing.push({ close: () => client.quit() });
    return client;
  };
  const slotOf = async (key: string) => Number(await admin.cluster('KEYSLOT', key));
  const keys = async (pattern: string) =>
    (await Promise.all(admin.nodes('master').map((node) => node.keys(pattern)))).flat().sort();

  beforeAll(async () => {
    cluster = await startRedisCluster();
    admin = new Cluster([{ host: '127.0.0.1', port: cluster.port }]);
  });
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
    await Promise.all(admin.nodes('master').map((node) => node.flushall()));
  });
  afterAll(async () => {
    await admin?.quit();
    await cluster?.stop();
  });

  const sendOnce = async (outbox: Outbox) => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    closing.push(mock, client, outbox);
    expect(await outbox.add('sendText', { user_id: 'u1', msg: 'hi' }, { key: 'order-1' })).toMatchObject({
      added: 1,
    });
    const worker = outbox.work({ client });
    closing.push(worker);
    await until(async () => (await outbox.get('order-1'))?.state === 'delivered');
    expect(await outbox.get('order-1')).toEqual({ state: 'delivered', result: 'success' });
    expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendText']);
  };

  it('the outbox sends, through a Cluster of yours and through a URL of the nodes', async () => {
    await sendOnce(createOutbox({ connection: { client: own() } }));
    expect(await keys('bull:{oa-outbox}:*')).toContain('bull:{oa-outbox}:meta');
    expect(await keys('bull:oa-outbox:*')).toEqual([]);
    await Promise.all(admin.nodes('master').map((node) => node.flushall()));
    await sendOnce(createOutbox({ connection: { url: cluster.url }, name: 'shop' }));
    expect(await keys('bull:{shop}:*')).toContain('bull:{shop}:meta');
    // A name with a hash tag of its own is kept as it is.
    await sendOnce(createOutbox({ connection: { url: cluster.url }, name: 'app-{7}' }));
    expect(await keys('bull:app-{7}:*')).toContain('bull:app-{7}:meta');
  });

  for (const order of ['none', 'sender'] as const) {
    it(`the inbox (order: '${order}') answers 200 and hands the events to its worker`, async () => {
      const inbox: Inbox = createInbox({ connection: { client: own() }, order });
      closing.push(inbox);
      const handler = createWebhookHandler({ onEvent: inbox.store });
      const server = await listen((req, res) => void handler(req, res));
      closing.push(server);
      for (const [from, seq] of [
        ['alice', 1],
        ['bob', 1],
        ['alice', 2],
      ] as const) {
        expect((await post(server.url, message(from, seq))).status).toBe(200);
      }
      const seen: string[] = [];
      closing.push(
        inbox.work((event) => {
          const data = (event as { data: { From_Account: string; MsgSeq: number } }).data;
          seen.push(`${data.From_Account} ${data.MsgSeq}`);
        }),
      );
      await until(() => seen.length === 3);
      expect(seen.sort()).toEqual(['alice 1', 'alice 2', 'bob 1']);
      expect(await keys('bull:{oa-inbox}:*')).toContain('bull:{oa-inbox}:meta');
    });
  }

  it('different queues and different accounts are on different slots', async () => {
    expect(await slotOf('bull:{oa-outbox}:wait')).not.toBe(await slotOf('bull:{oa-inbox}:wait'));
    expect(await slotOf('bull:{oa-inbox}:wait')).not.toBe(await slotOf('bull:{oa-inbox-dead}:wait'));
    // Each OA's coordination on the cluster: its own limiter keys (one slot per OA).
    const mock = await createMockServer({
      accounts: [
        { username: 'shop-1', apiKey: 'key-1', apiSecret: 'secret-1-0123456789' },
        { username: 'shop-2', apiKey: 'key-2', apiSecret: 'secret-2-0123456789' },
      ],
    });
    const coordination = createRedisCoordination({ url: cluster.url });
    closing.push(mock, coordination);
    for (const [account, apiKey, apiSecret] of [
      ['shop-1', 'key-1', 'secret-1-0123456789'],
      ['shop-2', 'key-2', 'secret-2-0123456789'],
    ] as const) {
      const client = new OAClient({ baseUrl: mock.url, apiKey, apiSecret, account, coordination });
      closing.push(client);
      expect(await client.sendText({ user_id: 'u1', msg: 'hi' })).toBe('success');
    }
    // Kept per OA: its api key at its base URL.
    const oa = (apiKey: string) => `${apiKey}@${mock.url}/`;
    const limits = await keys('oa:limit:*');
    expect(limits).toEqual([`oa:limit:{${oa('key-1')}}:general`, `oa:limit:{${oa('key-2')}}:general`]);
    expect(await slotOf(limits[0] as string)).not.toBe(await slotOf(limits[1] as string));
    expect(await keys('oa:token:*')).toEqual([`oa:token:${oa('key-1')}`, `oa:token:${oa('key-2')}`]);
  });
});
