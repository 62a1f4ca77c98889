// An ioredis `Cluster` of the user's given to the outbox and the inbox: with every node down, the calls
// that add or store reject with OAConnectionError within seconds (as they do for a `Redis` of the
// user's, and for a URL of the nodes), instead of waiting as long as that client waits (for ever, with
// the `maxRetriesPerRequest: null` BullMQ requires); they work again once the cluster is back, and
// `close()` leaves the user's client open.
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAConnectionError } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import type { WebhookEvent } from '../../src/webhook/index.js';
import { type RedisCluster, startRedisCluster } from '../redis/redis-cluster.js';
import { REDIS_SERVER } from '../redis/redis-server.js';
import { eventWith } from '../webhook/support.js';

const PENDING = Symbol('still pending');

/** How `call` settled and how long it took; `PENDING` after `ms`. */
async function settle(call: () => Promise<unknown>, ms: number) {
  const start = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    call().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    ),
    new Promise<typeof PENDING>((resolve) => {
      timer = setTimeout(() => resolve(PENDING), ms);
    }),
  ]);
  clearTimeout(timer);
  return { outcome, ms: performance.now() - start };
}

const message = (seq: number) =>
  eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: `hi ${seq}` } }], seq, {
    From_Account: 'u1',
  }) as WebhookEvent;

describe.skipIf(!REDIS_SERVER)("a Cluster of the user's whose nodes are all down", () => {
  let cluster: RedisCluster;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = new Cluster(
      cluster.ports.map((port) => ({ host: '127.0.0.1', port })),
      { redisOptions: { maxRetriesPerRequest: null } },
    );
  });
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  it('add and store reject OAConnectionError within seconds, work again once it is back, and close() leaves the client open', async () => {
    const outbox = createOutbox({ connection: { client } });
    const inbox = createInbox({ connection: { client }, order: 'sender' });
    try {
      expect(await outbox.add('sendText', { user_id: 'u1', msg: 'hi' }, { key: 'k1' })).toMatchObject({
        added: 1,
      });
      await inbox.store(message(1));

      await cluster.shutdown();
      for (const call of [
        () => outbox.add('sendText', { user_id: 'u1', msg: 'hi' }, { key: 'k2' }),
        () => inbox.store(message(2)),
      ]) {
        const { outcome, ms } = await settle(call, 20_000);
        expect(outcome).not.toBe(PENDING);
        expect((outcome as { error?: unknown }).error).toBeInstanceOf(OAConnectionError);
        expect(ms).toBeLessThan(8_000);
      }

      await cluster.start();
      // Back: the same calls go through (the first ones may still see the cluster settling).
      const deadline = Date.now() + 20_000;
      let added: unknown;
      while (Date.now() < deadline) {
        added = await outbox
          .add('sendText', { user_id: 'u1', msg: 'hi' }, { key: 'k3' })
          .catch((e: unknown) => e);
        if (!(added instanceof Error)) break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(added).toMatchObject({ added: 1 });
      expect(await outbox.get('k1')).toMatchObject({ state: 'waiting' });
    } finally {
      await outbox.close();
      await inbox.close();
    }
    // The user's client is still theirs, and open.
    expect(client.status).not.toBe('end');
    expect(await client.set('still-open', '1')).toBe('OK');
  }, 90_000);
});
