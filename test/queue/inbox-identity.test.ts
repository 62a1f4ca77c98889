// The inbox's job id follows the webhook's dedupe key: two events that share a MsgKey under two
// CallbackCommand values are two jobs; a redelivery of either is still stored once. Real redis-server.
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/queue/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { envelope, listen, loadFixture, post } from '../webhook/support.js';

const callback = loadFixture('tencent-doc-C2C.CallbackAfterSendMsg-1.json');
const sent = envelope(callback);
const withdrawn = envelope({
  CallbackCommand: 'C2C.CallbackAfterMsgWithDraw',
  From_Account: callback.From_Account,
  To_Account: callback.To_Account,
  MsgKey: callback.MsgKey,
  UnreadMsgNum: 6,
});

describe.skipIf(!REDIS_SERVER)('inbox job ids', () => {
  const shared = useRedisServer();
  let inbox: Inbox | undefined;

  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('stores an after-send callback and a withdraw with the same MsgKey as two jobs', async () => {
    inbox = createInbox({ connection: { url: shared.server.url }, name: 'identity' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const server = await listen((req, res) => void handler(req, res));
    try {
      for (const body of [sent, withdrawn, sent, withdrawn]) {
        expect((await post(server.url, body)).status).toBe(200);
      }
      expect(await shared.redis.llen('bull:identity:wait')).toBe(2);

      const seen: WebhookEvent[] = [];
      const worker = inbox.work((event) => {
        seen.push(event);
      });
      const deadline = Date.now() + 15_000;
      while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
      await worker.close();
      expect(seen.map((event) => (event.data as { CallbackCommand?: string }).CallbackCommand)).toEqual([
        'C2C.CallbackAfterSendMsg',
        'C2C.CallbackAfterMsgWithDraw',
      ]);
    } finally {
      await server.close();
    }
  });
});
