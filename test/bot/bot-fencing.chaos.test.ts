// A bot on the inbox (`order: 'sender'`) whose worker process is paused (SIGSTOP) mid-handler for
// longer than its lockDurationMs, against the fake OA server on loopback and a real redis-server:
// another process takes the senders over, and when the first resumes, its stale handlers neither reply
// nor write their old sessions over the newer ones (the write is refused and logged).
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import { createRedisSessionStore } from '../../src/redis/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent, type WebhookEvent } from '../../src/webhook/index.js';
import { kill, pause, type Running, resume, startScript } from '../queue/processes.js';
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

describe.skipIf(!REDIS_SERVER)('a bot worker paused past its lock (order: sender)', () => {
  let server: RedisServer;
  let redis: Redis;
  let mock: MockServer;
  const running: Running[] = [];

  beforeAll(async () => {
    server = await startRedis();
    redis = redisClient(server.url);
    mock = await createMockServer({ rateLimit: false });
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map(kill));
  });
  afterAll(async () => {
    await redis.quit();
    await mock.close();
    await server.stop();
  });

  it('the stale worker sends no reply after resuming, and the sessions are never rolled back', async () => {
    const base: BotWorkerConfig = {
      redisUrl: server.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      inbox: 'fenced-in',
      outbox: 'fenced-out',
      concurrency: 4,
      sendReplies: false,
      lockDurationMs: 1000,
    };
    const users = ['rita', 'quiet1'];
    const MESSAGES = 8;
    const stale = await startScript(SCRIPT, [
      JSON.stringify({ ...base, name: 'a', slowText: 'm2', slowMs: 2500 }),
    ]);
    running.push(stale);
    const inbox = createInbox({ connection: { url: server.url }, name: base.inbox, order: 'sender' });
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    const outbox = createOutbox({ connection: { url: server.url }, name: base.outbox });
    // One send at a time: the replies reach the fake in the order they were added (with more, two
    // replies of one user waiting at once may be sent side by side and arrive either way round).
    const sender = outbox.work({ client, concurrency: 1 });
    const sessions = createRedisSessionStore({ url: server.url });
    const counts = async () =>
      Promise.all(
        users.map(
          async (u) =>
            (JSON.parse((await sessions.get(`oa_account:${u}`)) ?? '{}') as { count?: number }).count,
        ),
      );
    const sent = (user: string) => redis.lrange(`sent:${user}`, 0, -1);
    try {
      for (const user of users) await inbox.store(text(user, 1));
      await until(async () => (await Promise.all(users.map(sent))).every((s) => s.length === 1), 15_000);
      await until(async () => (await counts()).every((c) => c === 1), 5_000);
      for (const user of users) await inbox.store(text(user, 2));
      // Both handlers of m2 are in their wait, holding their senders: the process stops there.
      await until(
        async () => (await Promise.all(users.map((u) => redis.llen(`slow:${u}`)))).every((n) => n === 1),
        10_000,
      );
      pause(stale);

      const fresh = await startScript(SCRIPT, [JSON.stringify({ ...base, name: 'b' })]);
      running.push(fresh);
      for (let seq = 3; seq <= MESSAGES; seq++) for (const user of users) await inbox.store(text(user, seq));
      await until(async () => (await counts()).every((c) => c === MESSAGES), 15_000);
      expect(await counts()).toEqual([MESSAGES, MESSAGES]);

      resume(stale);
      await until(() => /session write was refused/.test(stale.output), 10_000);
      await new Promise((r) => setTimeout(r, 1500));

      // Never rolled back to the stale handler's count.
      expect(await counts()).toEqual([MESSAGES, MESSAGES]);
      expect(stale.output).toMatch(/warn: .*session write was refused/);
      // The stale worker's last reply is m1's, from before its pause; the rest came from the other.
      const later = Array.from({ length: MESSAGES - 1 }, (_, i) => `b:m${i + 2}`);
      expect(await sent('rita')).toEqual(['a:m1', ...later]);
      expect(await sent('quiet1')).toEqual(['a:m1', ...later]);
      await until(() => mock.deliveries.length >= 2 * MESSAGES, 10_000);
      const repliesTo = (user: string) =>
        mock.deliveries.filter((d) => d.recipients.includes(user)).map((d) => String(d.items[0]?.msg));
      const expected = Array.from({ length: MESSAGES }, (_, i) => `got m${i + 1} #${i + 1}`);
      expect(repliesTo('rita')).toEqual(expected);
      expect(repliesTo('quiet1')).toEqual(expected);
    } finally {
      await sender.close();
      await outbox.close();
      await sessions.close();
      await inbox.close();
      await client.close();
    }
  }, 60_000);
});
