// A platform's bot with a durable outbox (createBot({ accounts, outbox })) against the fake OA server
// with two accounts and a real redis-server: replies that meet a rotated secret wait for the new one
// instead of being lost, then arrive once each, in per-user order, through their own account; the
// other account's replies go on meanwhile.
import { afterEach, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { createAccounts, type OAAccounts } from '../../src/index.js';
import { createOutbox, type Outbox } from '../../src/queue/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { accountStore, refusedLogins, servedAccounts, texts } from '../accounts/support.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!REDIS_SERVER)('createBot({ accounts, outbox })', () => {
  const shared = useRedisServer();
  let mock: MockServer | undefined;
  let accounts: OAAccounts | undefined;
  let outbox: Outbox | undefined;

  afterEach(async () => {
    await outbox?.close();
    await accounts?.close();
    await mock?.close();
    mock = accounts = outbox = undefined;
  });

  it("a shop's replies across a rotated secret: none lost, each once, in per-user order, the other shop unhindered", async () => {
    const served = servedAccounts(2);
    mock = await createMockServer({ accounts: served, rateLimit: false });
    const store = accountStore(served);
    accounts = createAccounts({
      credentials: store.credentials,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'bot-rotation' });
    const bot = createBot({ accounts, outbox, sessions: false });
    bot.on('text', (ctx) => ctx.reply(`${ctx.event.username} ${ctx.from} ${ctx.text}`));
    const say = (username: string, from: string, text: string) =>
      bot.handle(parseWebhookEvent(JSON.stringify(buildInboundEvent(text, { from, username }))));
    const worker = outbox.work({ accounts, concurrency: 8 });
    try {
      await say('shop-1', 'u1', 'm1');
      expect(await until(() => texts(mock as MockServer, 'shop-1').length === 1)).toBe(true);

      // The shop's OA rotates its secret; its users keep writing, and so do shop-2's.
      mock.account('shop-1').rotateSecret('rotated-secret-1');
      const users = ['u1', 'u2', 'u3'];
      await Promise.all(
        ['shop-1', 'shop-2'].flatMap((username) =>
          users.map(async (user) => {
            for (const text of ['m2', 'm3', 'm4']) await say(username, user, text);
          }),
        ),
      );
      expect(await until(() => refusedLogins(mock as MockServer, 'shop-1') >= 1)).toBe(true);
      expect(await until(() => texts(mock as MockServer, 'shop-2').length === 9)).toBe(true);
      // Waiting for working credentials, not failed.
      expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ failed: 0, unknown: 0 });

      store.db.set('shop-1', { apiKey: 'key-shop-1', apiSecret: 'rotated-secret-1' });
      await outbox.waitFor('all', { account: 'shop-1', timeoutMs: 30_000 });
      expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({
        delivered: 10,
        failed: 0,
        unknown: 0,
      });
      for (const username of ['shop-1', 'shop-2']) {
        const sent = texts(mock, username);
        for (const user of users) {
          const want = (username === 'shop-1' && user === 'u1' ? ['m1'] : [])
            .concat(['m2', 'm3', 'm4'])
            .map((text) => `${username} ${user} ${text}`);
          expect(
            sent.filter((t) => t.startsWith(`${username} ${user} `)),
            `${username} ${user}`,
          ).toEqual(want);
        }
      }
    } finally {
      await worker.close();
    }
  }, 60_000);
});
