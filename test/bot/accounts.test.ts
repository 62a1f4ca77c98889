// A bot of many accounts (createBot({ accounts })) against the fake OA server with two accounts on
// loopback: each event answered through the account that received it, with that account's token;
// sessions (in memory and in a real redis-server) and per-user order kept per account.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type BotOptions, createBot } from '../../src/bot/index.js';
import { createAccounts, type OAAccounts, OAClient, OAConfigError } from '../../src/index.js';
import { createRedisSessionStore } from '../../src/redis/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { createWebhookHandler, parseWebhookEvent } from '../../src/webhook/index.js';
import { type Listening, listen } from '../helpers/listen.js';
import { REDIS_SERVER, type RedisServer, startRedis } from '../redis/redis-server.js';

const SHOPS = ['shop-a', 'shop-b'].map((username, i) => ({
  username,
  apiKey: `key-${i + 1}`,
  apiSecret: `secret-${i + 1}-abcdef`,
}));

let mock: MockServer;
let accounts: OAAccounts;
let receiver: Listening | undefined;
beforeAll(async () => {
  mock = await createMockServer({ accounts: SHOPS });
  accounts = createAccounts({
    credentials: (account) => SHOPS.find((s) => s.username === account),
    clientOptions: { baseUrl: mock.url },
  });
});
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
  mock.reset();
});
afterAll(async () => {
  await accounts.close();
  await mock.close();
});

/** A counting bot behind a node webhook handler on loopback; the mock posts there. */
async function countingBot(options: BotOptions<{ count?: number }> = { accounts }) {
  const bot = createBot<{ count?: number }>(options);
  bot.on('text', async (ctx) => {
    ctx.session.count = (ctx.session.count ?? 0) + 1;
    await ctx.reply(`${ctx.text} #${ctx.session.count}`);
  });
  receiver = await listen(createWebhookHandler({ onEvent: bot.handle }));
  return `${receiver.url}/oa/webhook`;
}

const texts = (username: string, user: string) =>
  mock
    .account(username)
    .deliveries.filter((d) => d.recipients.includes(user))
    .map((d) => d.items[0]?.msg);

describe('createBot({ accounts })', () => {
  it('answers through the receiving account, with its token; sessions are per account', async () => {
    const webhookUrl = await countingBot();
    await mock.say('u1', 'hi', { account: 'shop-a', webhookUrl });
    await mock.say('u1', 'hi', { account: 'shop-a', webhookUrl });
    await mock.say('u1', 'hello', { account: 'shop-b', webhookUrl });

    // The same user id in two accounts is two users: two sessions, each reply in its own account.
    expect(texts('shop-a', 'u1')).toEqual(['hi #1', 'hi #2']);
    expect(texts('shop-b', 'u1')).toEqual(['hello #1']);
    // Each account's sends carry a token that account issued, never the other's.
    const sendTokens = (username: string) =>
      mock
        .account(username)
        .requests.filter((r) => r.path.endsWith('/webhook/broadcast-message'))
        .map((r) => r.headers.authorization);
    const a = sendTokens('shop-a');
    const b = sendTokens('shop-b');
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(1);
    expect(a.every((token) => token?.startsWith('Bearer '))).toBe(true);
    expect(b.some((token) => a.includes(token))).toBe(false);
  });

  it('keeps the events of one user apart per account, in order within each', async () => {
    const order: string[] = [];
    const bot = createBot({ accounts, sessions: false });
    bot.on('text', async (ctx) => {
      order.push(`start ${ctx.event.username} ${ctx.text}`);
      // The first event of shop-a is slow: shop-b's event of the same user id does not wait for it.
      if (ctx.text === 'slow') await new Promise((resolve) => setTimeout(resolve, 150));
      order.push(`end ${ctx.event.username} ${ctx.text}`);
    });
    const event = (text: string, username: string) =>
      parseWebhookEvent(JSON.stringify(buildInboundEvent(text, { from: 'u1', username })));
    await Promise.all([
      bot.handle(event('slow', 'shop-a')),
      bot.handle(event('next', 'shop-a')),
      bot.handle(event('other', 'shop-b')),
    ]);
    expect(order.indexOf('end shop-b other')).toBeLessThan(order.indexOf('end shop-a slow'));
    expect(order.indexOf('end shop-a slow')).toBeLessThan(order.indexOf('start shop-a next'));
  });

  it('takes exactly one of client and accounts', () => {
    const client = new OAClient({ baseUrl: mock.url, apiKey: 'key', apiSecret: 'secret-x' });
    expect(() => createBot({})).toThrow(OAConfigError);
    expect(() => createBot({ client, accounts })).toThrow(/one of them/);
    expect(() => createBot({ accounts: {} as OAAccounts })).toThrow(/accounts must be the accounts/);
  });

  it('with an outbox, adds each reply under the receiving account, ordered by user, keyed as with a client', async () => {
    const added: { method: string; params: unknown; options: unknown }[] = [];
    const outbox = {
      add: async (method: string, params: unknown, options: unknown) => {
        added.push({ method, params, options });
      },
    };
    const bot = createBot({ accounts, outbox, sessions: false });
    bot.on('text', async (ctx) => {
      await ctx.reply(`1 ${ctx.text}`);
      await ctx.replyWithGreeting();
    });
    const event = (username: string) =>
      parseWebhookEvent(
        JSON.stringify(
          buildInboundEvent('hi', { from: 'u1', username, msgSeq: 7, msgRandom: 1, msgTime: 1_800_000_000 }),
        ),
      );
    await bot.handle(event('shop-a'));
    await bot.handle(event('shop-b'));
    const client = new OAClient({ baseUrl: mock.url, apiKey: 'key', apiSecret: 'secret-x' });
    const single: { options: unknown }[] = [];
    const one = createBot({
      client,
      outbox: { add: async (_m: string, _p: unknown, options: unknown) => void single.push({ options }) },
      sessions: false,
    });
    one.on('text', (ctx) => ctx.reply('x'));
    await one.handle(event('shop-a'));
    await client.close();

    expect(added.map((a) => a.method)).toEqual(['sendText', 'sendGreeting', 'sendText', 'sendGreeting']);
    const options = added.map((a) => a.options as { key: string; account: string; orderGroup: string });
    expect(options.map((o) => [o.account, o.orderGroup])).toEqual([
      ['shop-a', 'u1'],
      ['shop-a', 'u1'],
      ['shop-b', 'u1'],
      ['shop-b', 'u1'],
    ]);
    // The reply keys as today (the event's MsgKey and position); the same MsgKey in two accounts, two keys.
    expect(options.every((o) => /^reply:7_1_1800000000\.[0-9a-f]{16}:[12]$/.test(o.key))).toBe(true);
    expect(new Set(options.map((o) => o.key)).size).toBe(4);
    // A bot of one client adds its replies as before: no account, no order group.
    expect(single.map((s) => Object.keys(s.options as object))).toEqual([['key']]);
    expect(mock.accounts.flatMap((a) => a.deliveries)).toEqual([]);
  });

  it('refuses an event that names no account, sending nothing', async () => {
    const bot = createBot({ accounts });
    bot.on('text', (ctx) => ctx.reply('never'));
    const raw = buildInboundEvent('hi', { from: 'u1' }) as Record<string, unknown>;
    delete raw.username;
    await expect(bot.handle(parseWebhookEvent(JSON.stringify(raw)))).rejects.toThrow(OAConfigError);
    expect(mock.accounts.flatMap((a) => a.deliveries)).toEqual([]);
  });
});

describe.skipIf(!REDIS_SERVER)('createBot({ accounts }) with Redis sessions', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("keeps each account's session of one user id under its own key", async () => {
    const sessions = createRedisSessionStore({ url: redis.url });
    try {
      const webhookUrl = await countingBot({ accounts, sessions });
      await mock.say('u7', 'x', { account: 'shop-a', webhookUrl });
      await mock.say('u7', 'x', { account: 'shop-a', webhookUrl });
      await mock.say('u7', 'y', { account: 'shop-b', webhookUrl });
      expect(texts('shop-a', 'u7')).toEqual(['x #1', 'x #2']);
      expect(texts('shop-b', 'u7')).toEqual(['y #1']);
      expect(JSON.parse((await sessions.get('shop-a:u7')) ?? 'null')).toEqual({ count: 2 });
      expect(JSON.parse((await sessions.get('shop-b:u7')) ?? 'null')).toEqual({ count: 1 });
    } finally {
      await sessions.close();
    }
  });
});
