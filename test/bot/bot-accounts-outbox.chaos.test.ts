// A platform's bot with a durable outbox (createBot({ accounts, outbox })) against the fake OA server
// with 3 accounts and a real redis-server (or a Redis Cluster): 3 users of each account send 4
// messages; the replies are sent by an outbox worker in a child process, SIGKILLed mid-way with
// sends in flight, and a second one that finishes. Every reply is delivered once, through the account
// that received its message, and each user's replies arrive in the order of their messages.
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { createAccounts, type OAAccounts } from '../../src/index.js';
import { createOutbox, type Outbox } from '../../src/queue/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { servedAccounts, texts } from '../accounts/support.js';
import type { AccountsWorkerConfig } from '../queue/outbox-accounts-worker.js';
import { kill, type Running, startScript } from '../queue/processes.js';
import { REDIS_SERVER, type RedisServer, startRedis } from '../redis/redis-server.js';

const WORKER = fileURLToPath(new URL('../queue/outbox-accounts-worker.ts', import.meta.url));
const SEND = '/webhook/broadcast-message';
const SERVED = servedAccounts(3);
const USERS = ['u1', 'u2', 'u3'];
const MESSAGES = 4;
const TOTAL = SERVED.length * USERS.length * MESSAGES;

async function until(done: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe.skipIf(!REDIS_SERVER)('createBot({ accounts, outbox }) across a killed worker', () => {
  let redis: RedisServer | undefined;
  let mock: MockServer | undefined;
  let outbox: Outbox | undefined;
  let accounts: OAAccounts | undefined;
  const workers = new Set<Running>();

  afterAll(async () => {
    await Promise.all([...workers].map(kill));
    await outbox?.close();
    await accounts?.close();
    await mock?.close();
    await redis?.stop();
  });

  it('3 accounts x 3 users x 4 messages, a worker SIGKILLed mid-way: every reply once, through its account, in per-user order', async () => {
    redis = await startRedis();
    mock = await createMockServer({ accounts: SERVED, rateLimit: false });
    // Each send is held a while at the fake (the worker is killed with its sends there, so they are
    // delivered and their jobs end `unknown`), each account's first one longer: a reply of the same user
    // sent beside it would overtake it.
    for (const { username } of SERVED) {
      const account = mock.account(username);
      account.injectFault({ kind: 'delay', delayMs: 1500 }, { path: SEND, times: 1 });
      account.injectFault({ kind: 'delay', delayMs: 100 }, { path: SEND, times: Number.POSITIVE_INFINITY });
    }
    const config: AccountsWorkerConfig = {
      redisUrl: redis.url,
      baseUrl: mock.url,
      accounts: SERVED,
      name: 'bot-replies',
      concurrency: 6,
      lockDurationMs: 2000,
      general: { max: 1000, windowMs: 1000 },
    };
    const start = async () => {
      const running = await startScript(WORKER, [JSON.stringify(config)]);
      workers.add(running);
      return running;
    };
    const first = await start();

    outbox = createOutbox({ connection: { url: redis.url }, name: config.name });
    accounts = createAccounts({
      credentials: (account) => SERVED.find((a) => a.username === account),
      clientOptions: { baseUrl: mock.url },
    });
    const bot = createBot({ accounts, outbox, sessions: false });
    bot.on('text', (ctx) => ctx.reply(`${ctx.event.username} ${ctx.from} ${ctx.text}`));
    // Every user's messages at once, as the webhook hands them over: the bot takes each user's in order.
    await Promise.all(
      SERVED.flatMap(({ username }) =>
        USERS.flatMap((from) =>
          Array.from({ length: MESSAGES }, (_, i) =>
            bot.handle(parseWebhookEvent(JSON.stringify(buildInboundEvent(`m${i + 1}`, { from, username })))),
          ),
        ),
      ),
    );

    // Mid-way, while every job the worker runs is a send held at the fake (none between the worker and
    // the fake, where a kill would lose it): killed.
    // Every account's, of the one fake (its own `deliveries` and `requests` are its first account's).
    const delivered = () => mock?.accounts.reduce((n, a) => n + a.deliveries.length, 0) ?? 0;
    expect(await until(() => delivered() >= TOTAL / 4, 30_000)).toBe(true);
    const held = () =>
      mock?.accounts
        .flatMap((a) => a.requests)
        .filter((r) => r.path.endsWith(SEND) && r.outcome === 'pending').length ?? 0;
    const active = async () => {
      const counts = await Promise.all(SERVED.map((a) => outbox?.counts({ account: a.username })));
      return counts.reduce((n, c) => n + (c?.active ?? 0), 0);
    };
    const allHeld = async () => {
      const atFake = held();
      const running = await active();
      return running > 0 && atFake >= running;
    };
    expect(await until(allHeld, 10_000)).toBe(true);
    await kill(first);
    workers.delete(first);
    const atKill = delivered();
    expect(atKill).toBeLessThan(TOTAL);
    await start();

    await Promise.all(
      SERVED.map(({ username }) => outbox?.waitFor('all', { account: username, timeoutMs: 60_000 })),
    );
    // Settled at the fake: the killed worker's sends were delivered as they were let go.
    expect(await until(() => delivered() >= TOTAL, 5_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));

    const counts = await Promise.all(SERVED.map(({ username }) => outbox?.counts({ account: username })));
    const sum = (state: 'delivered' | 'unknown' | 'failed') =>
      counts.reduce((n, c) => n + (c?.[state] ?? 0), 0);
    console.log(
      `${TOTAL} replies, ${atKill} delivered at the kill: ${sum('unknown')} unknown (in flight then)`,
    );
    expect(sum('delivered') + sum('unknown')).toBe(TOTAL);
    expect(sum('failed')).toBe(0);
    expect(sum('unknown')).toBeLessThanOrEqual(SERVED.length * 3);

    const wrong: string[] = [];
    for (const { username } of SERVED) {
      const sent = texts(mock, username);
      // Through its own account: each account sent its own users' replies only, each once.
      expect(sent.filter((t) => !t.startsWith(`${username} `))).toEqual([]);
      expect(new Set(sent).size).toBe(sent.length);
      for (const user of USERS) {
        const got = sent.filter((t) => t.startsWith(`${username} ${user} `));
        const want = Array.from({ length: MESSAGES }, (_, i) => `${username} ${user} m${i + 1}`);
        if (got.join() !== want.join()) wrong.push(`${username} ${user}: ${got.join(', ')}`);
      }
    }
    expect(wrong).toEqual([]);
  }, 120_000);
});
