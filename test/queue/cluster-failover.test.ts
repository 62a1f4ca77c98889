// A failover on a real Redis Cluster (3 masters, a replica each): the replica of the master that
// serves the queue takes over (`CLUSTER FAILOVER`) while the outbox sends and the inbox stores and
// hands out events. No event answered 200 is lost, and no outbox key is delivered twice.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createInbox, createOutbox, type Inbox, type Outbox } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { type RedisCluster, startRedisCluster } from '../redis/redis-cluster.js';
import { REDIS_SERVER } from '../redis/redis-server.js';
import { eventWith, listen, post } from '../webhook/support.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await done()) return true;
    await sleep(50);
  }
  return done();
}

describe.skipIf(!REDIS_SERVER)('a failover of the Redis Cluster', () => {
  let cluster: RedisCluster;
  const closing: { close(): Promise<unknown> }[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
  });
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
  });
  afterAll(async () => {
    await cluster?.stop();
  });

  it('while the outbox sends: every key ends, none is delivered twice', async () => {
    const mock: MockServer = await createMockServer();
    // Slow answers, so that sends are in flight when the master changes.
    mock.injectFault({ kind: 'delay', delayMs: 30 }, { times: Infinity, path: '/webhook/broadcast-message' });
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    const outbox: Outbox = createOutbox({ connection: { url: cluster.url } });
    closing.push(mock, client, outbox);
    const keys = Array.from({ length: 120 }, (_, i) => `k-${i}`);
    await outbox.addMany(
      keys.map((key) => ({ method: 'sendText', params: { user_id: 'u1', msg: key }, key })),
    );
    closing.push(outbox.work({ client, concurrency: 4 }));

    expect(await until(() => mock.deliveries.length >= 20, 20_000)).toBe(true);
    const { from, to } = await cluster.failover('bull:{oa-outbox}:wait');
    expect(from).not.toBe(to);
    // The master changed while sends were still to be made.
    expect(mock.deliveries.length).toBeLessThan(keys.length);
    // Adds go on after the failover, through the same outbox.
    await outbox.add('sendText', { user_id: 'u1', msg: 'after' }, { key: 'after' });
    keys.push('after');

    const final = await outbox.waitFor('all', { timeoutMs: 40_000 });
    const sent = mock.deliveries.map((d) => d.items?.[0]?.msg as string);
    expect(sent.length).toBe(new Set(sent).size);
    for (const key of keys) {
      const state = final.get(key)?.state ?? (await outbox.get(key))?.state;
      expect(['delivered', 'unknown']).toContain(state);
      if (state === 'delivered') expect(sent).toContain(key);
    }
  }, 90_000);

  for (const order of ['none', 'sender'] as const) {
    it(`while the inbox (order: '${order}') stores and hands out events: none answered 200 is lost`, async () => {
      const inbox: Inbox = createInbox({ connection: { url: cluster.url }, order });
      closing.push(inbox);
      const handler = createWebhookHandler({ onEvent: inbox.store });
      const server = await listen((req, res) => void handler(req, res));
      closing.push(server);
      const handled = new Set<number>();
      closing.push(
        inbox.work(
          (event: WebhookEvent) => {
            handled.add((event as { data: { MsgSeq: number } }).data.MsgSeq);
          },
          // A worker cut off mid-turn leaves its senders to another within 5 s.
          { concurrency: 4, lockDurationMs: 5_000 },
        ),
      );
      // Each event delivered as the OA does: again after an error, until a 200 (bounded).
      const deliver = async (seq: number) => {
        const event = eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: `m ${seq}` } }], seq, {
          From_Account: `${order}-user-${seq % 5}`,
        });
        for (let tries = 0; tries < 40; tries++) {
          if ((await post(server.url, event)).status === 200) return;
          await sleep(250);
        }
        throw new Error(`event ${seq} never answered 200`);
      };
      const total = 150;
      let answered = 0;
      const delivering = (async () => {
        for (let seq = 1; seq <= total; seq++) {
          await deliver(seq);
          answered = seq;
          await sleep(15);
        }
      })();
      expect(await until(() => handled.size >= 20, 20_000)).toBe(true);
      await cluster.failover('bull:{oa-inbox}:wait');
      // The master changed while events were still being delivered.
      expect(answered).toBeLessThan(total);
      await delivering;
      await until(() => handled.size === total, 40_000);
      const missing = Array.from({ length: total }, (_, i) => i + 1).filter((seq) => !handled.has(seq));
      expect(missing).toEqual([]);
    }, 90_000);
  }
});
