// The inbox's `order: 'sender'` across processes: 3 workers share one redis-server, 200 users each send
// 10 messages in a burst (the users at once, each user's in order), one worker is SIGKILLed mid-burst.
// Every user's messages are handled in order and none is lost; an event that was being handled when
// the kill came may be handled again, but only right after itself.
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/queue/index.js';
import type { WebhookEvent } from '../../src/webhook/index.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from '../redis/redis-server.js';
import { eventWith } from '../webhook/support.js';
import { kill, type Running, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./inbox-order-worker.ts', import.meta.url));
const USERS = 200;
const MESSAGES = 10;
const CONCURRENCY = 8;

const message = (user: number, seq: number) =>
  eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: `m${seq}` } }], seq, {
    From_Account: `u${user}`,
  }) as WebhookEvent;

/** `list` with each run of one value as one. */
const collapsed = (list: string[]) => list.filter((value, i) => i === 0 || list[i - 1] !== value);

describe.skipIf(!REDIS_SERVER)("inbox order: 'sender', several processes", () => {
  let server: RedisServer | undefined;
  const all: Running[] = [];

  afterAll(async () => {
    await Promise.all(all.map(kill));
    await server?.stop();
  });

  it('200 users x 10 messages, 3 workers, one killed mid-burst: every user in order, none lost', async () => {
    server = await startRedis();
    const url = server.url;
    const redis = redisClient(url);
    const inbox = createInbox({ connection: { url }, name: 'order-in', order: 'sender' });
    try {
      const workers = await Promise.all(
        [0, 1, 2].map(() => startScript(SCRIPT, [url, String(CONCURRENCY), 'order-in', 'sender'])),
      );
      all.push(...workers);
      const handled = async () => {
        const lengths = await Promise.all(
          Array.from({ length: USERS }, (_, u) => redis.llen(`handled:u${u}`)),
        );
        return lengths.reduce((a, b) => a + b, 0);
      };
      // Each user's messages in order, every user at once.
      const storing = Promise.all(
        Array.from({ length: USERS }, async (_, u) => {
          for (let seq = 1; seq <= MESSAGES; seq++) await inbox.store(message(u, seq));
        }),
      );
      const deadline = Date.now() + 20_000;
      while ((await handled()) < 300 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      const atKill = await handled();
      await kill(workers[0] as Running);
      await storing;
      // The kill came mid-burst.
      expect(atKill).toBeLessThan(USERS * MESSAGES);

      const expected = Array.from({ length: MESSAGES }, (_, i) => String(i + 1));
      const lists = async () =>
        Promise.all(Array.from({ length: USERS }, (_, u) => redis.lrange(`handled:u${u}`, 0, -1)));
      const done = Date.now() + 30_000;
      let got = await lists();
      while (got.some((list) => collapsed(list).length < MESSAGES) && Date.now() < done) {
        await new Promise((r) => setTimeout(r, 100));
        got = await lists();
      }
      const wrong = got.flatMap((list, u) =>
        JSON.stringify(collapsed(list)) === JSON.stringify(expected) ? [] : [`u${u}: ${list.join(',')}`],
      );
      expect(wrong).toEqual([]);
      // Handled twice only what the killed worker had in hand: at most one event per busy slot.
      const repeats = got.reduce((n, list) => n + list.length - collapsed(list).length, 0);
      expect(repeats).toBeLessThanOrEqual(CONCURRENCY);
      // Nothing left pending, every lock released, no turn failed.
      const pending = await redis.keys('bull:order-in:oa:*:pending');
      expect(pending).toEqual([]);
      expect(await redis.keys('bull:order-in:oa:*:lock')).toEqual([]);
      expect(await redis.zcard('bull:order-in:failed')).toBe(0);
    } finally {
      await inbox.close();
      await redis.quit();
    }
  }, 90_000);
});
