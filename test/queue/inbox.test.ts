// The inbox against a real redis-server: the webhook answers 200 once the event is stored, a
// redelivery is stored once, the handler gets the event back, retries, then the dead letter.
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/queue/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { listen, post, textEvent } from '../webhook/support.js';

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
}

describe.skipIf(!REDIS_SERVER)('inbox', () => {
  const shared = useRedisServer();
  let inbox: Inbox | undefined;

  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('answers 200 once stored; a redelivery is stored once, also after processing', async () => {
    inbox = createInbox({ connection: { url: shared.server.url }, name: 'in' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const server = await listen((req, res) => void handler(req, res));
    try {
      expect((await post(server.url, textEvent('one', 1))).status).toBe(200);
      expect((await post(server.url, textEvent('one', 1))).status).toBe(200);
      expect((await post(server.url, textEvent('two', 2))).status).toBe(200);
      // Stored before the answer: two jobs waiting, nothing processed yet.
      expect(await shared.redis.llen('bull:in:wait')).toBe(2);

      const seen: WebhookEvent[] = [];
      const worker = inbox.work((event) => {
        seen.push(event);
      });
      await until(() => seen.length === 2);
      expect(seen).toEqual([textEvent('one', 1), textEvent('two', 2)].map((e) => expect.objectContaining(e)));
      expect((await post(server.url, textEvent('one', 1))).status).toBe(200);
      await new Promise((r) => setTimeout(r, 200));
      expect(seen).toHaveLength(2);
      await worker.close();
    } finally {
      await server.close();
    }
  });

  it('a handler that keeps failing is retried, then left failed (the dead letter)', async () => {
    inbox = createInbox({ connection: { url: shared.server.url }, name: 'dl', attempts: 2 });
    await inbox.store(textEvent('bad', 7) as WebhookEvent);
    let tries = 0;
    const worker = inbox.work(() => {
      tries++;
      throw new Error('cannot process');
    });
    await until(async () => (await shared.redis.zcard('bull:dl:failed')) === 1);
    await worker.close();
    expect(tries).toBe(2);
    expect(await shared.redis.zcard('bull:dl:failed')).toBe(1);
  });

  it('a store that cannot reach Redis makes the webhook answer an error, so the OA delivers again', async () => {
    inbox = createInbox({ connection: { url: 'redis://127.0.0.1:1' }, name: 'down' });
    const handler = createWebhookHandler({ onEvent: (event) => inbox?.store(event) });
    const server = await listen((req, res) => void handler(req, res));
    try {
      const answered = await Promise.race([
        post(server.url, textEvent('lost?', 3)).then((r) => r.status),
        new Promise((r) => setTimeout(() => r('still waiting'), 10_000)),
      ]);
      // An answer (not a request left waiting for Redis), and an error one.
      expect(answered).toBe(500);
    } finally {
      await server.close();
    }
  });
});
