// A bot on the inbox (`order: 'sender'`), a keyed outbox and Redis sessions, against the fake OA server
// on loopback and a real redis-server: a handler that throws is run again without a second reply;
// sessions are one per user across processes; with 3 processes and one SIGKILLed mid-burst, every
// user's messages are handled in order, none is lost and none is answered twice.
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { OAClient } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import { createRedisSessionStore } from '../../src/redis/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent, type WebhookEvent } from '../../src/webhook/index.js';
import { kill, type Running, startScript } from '../queue/processes.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from '../redis/redis-server.js';
import type { BotWorkerConfig } from './bot-worker.js';

const SCRIPT = fileURLToPath(new URL('./bot-worker.ts', import.meta.url));

const text = (from: string, seq: number): WebhookEvent =>
  parseWebhookEvent(
    JSON.stringify(buildInboundEvent(`m${seq}`, { from, msgSeq: seq, msgTime: 1_800_000_000 })),
  );

async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/** The texts the fake delivered to `user`, in the order it accepted them. */
const repliesTo = (mock: MockServer, user: string) =>
  mock.deliveries.filter((d) => d.recipients.includes(user)).map((d) => String(d.items[0]?.msg));

describe.skipIf(!REDIS_SERVER)('a bot on the inbox and the outbox', () => {
  let server: RedisServer;
  let redis: Redis;
  let mock: MockServer;
  const running: Running[] = [];
  let queues = 0;

  beforeAll(async () => {
    server = await startRedis();
    redis = redisClient(server.url);
    mock = await createMockServer({ rateLimit: false });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map(kill));
    mock.reset();
  });
  afterAll(async () => {
    await redis.quit();
    await mock.close();
    await server.stop();
  });

  const config = (concurrency: number, sendReplies = true): BotWorkerConfig => {
    queues++;
    return {
      redisUrl: server.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      inbox: `bot-in-${queues}`,
      outbox: `bot-out-${queues}`,
      concurrency,
      sendReplies,
    };
  };

  it('a handler that throws after replying is run again by the inbox, and the reply is sent once', async () => {
    // The second run uploads again (no reuse of the answer for the same bytes): a new URL each time.
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      reuseUploads: false,
    });
    const outbox = createOutbox({ connection: { url: server.url }, name: 'retry-out' });
    const inbox = createInbox({ connection: { url: server.url }, name: 'retry-in', order: 'sender' });
    const bot = createBot({ client, outbox });
    let runs = 0;
    bot.on('text', async (ctx) => {
      runs++;
      await ctx.reply(`hello ${ctx.from}`);
      // Uploaded again by the second run (a new URL), but added under the same key: sent once.
      await ctx.replyWithImage(new URL('../fixtures/media/sample.png', import.meta.url));
      if (runs === 1) throw new Error('the database went away');
    });
    const inboxWorker = inbox.work(bot.handle);
    const outboxWorker = outbox.work({ client });
    try {
      await inbox.store(text('erin', 1));
      await until(() => runs === 2 && mock.deliveries.length === 2, 15_000);
      await new Promise((r) => setTimeout(r, 300));
      expect(runs).toBe(2);
      expect(repliesTo(mock, 'erin')[0]).toBe('hello erin');
      expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendText', 'sendImage']);
      expect(mock.requests.filter((r) => r.path.endsWith('/upload/image'))).toHaveLength(2);
      const keys = (await outbox.counts()).delivered;
      expect(keys).toBe(2);
    } finally {
      await inboxWorker.close();
      await outboxWorker.close();
      await inbox.close();
      await outbox.close();
      await client.close();
    }
  }, 30_000);

  it('sessions are one per user across two processes', async () => {
    const settings = config(4);
    running.push(...(await Promise.all([0, 1].map(() => startScript(SCRIPT, [JSON.stringify(settings)])))));
    const inbox = createInbox({ connection: { url: server.url }, name: settings.inbox, order: 'sender' });
    const users = Array.from({ length: 20 }, (_, u) => `s${u}`);
    try {
      // In waves, so that each user's messages are taken by whichever process is free.
      for (let seq = 1; seq <= 5; seq++) {
        await Promise.all(users.map((user) => inbox.store(text(user, seq))));
        await until(() => users.every((user) => repliesTo(mock, user).length >= seq), 15_000);
      }
      for (const user of users) {
        expect(repliesTo(mock, user)).toEqual([
          'got m1 #1',
          'got m2 #2',
          'got m3 #3',
          'got m4 #4',
          'got m5 #5',
        ]);
      }
      const sessions = createRedisSessionStore({ url: server.url });
      expect(JSON.parse((await sessions.get(`oa_account:s0`)) ?? 'null')).toEqual({ count: 5 });
      await sessions.close();
    } finally {
      await inbox.close();
    }
  }, 90_000);

  it('3 processes, 100 users x 6 messages, one SIGKILLed mid-burst: in order, none lost, none answered twice', async () => {
    // The bot processes handle events and add their replies; the replies are sent from here, by an
    // outbox worker that is not killed (a send in flight when its own worker dies ends `unknown`).
    const settings = config(8, false);
    const workers = await Promise.all([0, 1, 2].map(() => startScript(SCRIPT, [JSON.stringify(settings)])));
    running.push(...workers);
    const inbox = createInbox({ connection: { url: server.url }, name: settings.inbox, order: 'sender' });
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      rateLimit: false,
    });
    const outbox = createOutbox({ connection: { url: server.url }, name: settings.outbox });
    const sender = outbox.work({ client, concurrency: 8 });
    const users = Array.from({ length: 100 }, (_, u) => `k${u}`);
    const MESSAGES = 6;
    try {
      const storing = Promise.all(
        users.map(async (user) => {
          for (let seq = 1; seq <= MESSAGES; seq++) await inbox.store(text(user, seq));
        }),
      );
      const handled = async () =>
        (await Promise.all(users.map((u) => redis.llen(`handled:${u}`)))).reduce((a, b) => a + b, 0);
      await until(async () => (await handled()) >= 120, 20_000);
      const atKill = await handled();
      await kill(workers[0] as Running);
      await storing;
      expect(atKill).toBeLessThan(users.length * MESSAGES);

      const expected = Array.from({ length: MESSAGES }, (_, i) => `m${i + 1}`);
      const answered = (user: string) => repliesTo(mock, user).map((reply) => reply.split(' ')[1]);
      await until(() => users.every((user) => answered(user).length >= MESSAGES), 45_000);
      await new Promise((r) => setTimeout(r, 500));
      const lists = await Promise.all(users.map((u) => redis.lrange(`handled:${u}`, 0, -1)));
      const collapsed = (list: string[]) => list.filter((v, i) => i === 0 || list[i - 1] !== v);
      // Handled in order (an event the killed worker had in hand may be handled again, right after itself).
      expect(
        lists.flatMap((list, u) =>
          collapsed(list).join() === expected.join() ? [] : [`${users[u]}: ${list}`],
        ),
      ).toEqual([]);
      // Every message answered once: none lost, none twice.
      expect(
        users.flatMap((user) => {
          const got = [...answered(user)].sort();
          return got.join() === expected.join() ? [] : [`${user}: ${got}`];
        }),
      ).toEqual([]);
      expect(await outbox.counts()).toMatchObject({
        delivered: users.length * MESSAGES,
        unknown: 0,
        failed: 0,
      });
    } finally {
      await sender.close();
      await outbox.close();
      await client.close();
      await inbox.close();
    }
  }, 120_000);
});
