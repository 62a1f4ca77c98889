// The inbox under crashes: 500 inbound events posted to a webhook that stores them (10% posted twice)
// while the processing worker is killed with SIGKILL twice and started again.
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createInbox } from '../../src/queue/index.js';
import { createWebhookHandler } from '../../src/webhook/index.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from '../redis/redis-server.js';
import { listen, post, textEvent } from '../webhook/support.js';
import { kill, type Running, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./inbox-worker.ts', import.meta.url));
const EVENTS = 500;
const CONCURRENCY = 2;

const lines = (running: Running, verb: string) =>
  running.output
    .split('\n')
    .flatMap((line) => (line.startsWith(`${verb} `) ? [line.slice(verb.length + 1)] : []));

describe.skipIf(!REDIS_SERVER)('inbox chaos', () => {
  let server: RedisServer | undefined;
  const all: Running[] = [];

  afterAll(async () => {
    await Promise.all(all.map(kill));
    await server?.stop();
  });

  it('500 events, 10% posted twice, worker killed twice: every event processed, one job per MsgKey', async () => {
    server = await startRedis({ appendonly: true });
    const inbox = createInbox({ connection: { url: server.url }, name: 'chaos-in' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const receiver = await listen((req, res) => void handler(req, res));
    const redis = redisClient(server.url);
    try {
      let worker = await startScript(SCRIPT, [server.url, String(CONCURRENCY)]);
      all.push(worker);
      const posts: number[] = [];
      for (let i = 1; i <= EVENTS; i++) posts.push(i, ...(i % 10 === 0 ? [i] : []));
      let next = 0;
      const statuses: number[] = [];
      const posting = Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < posts.length) {
            const seq = posts[next++] ?? 0;
            statuses.push((await post(receiver.url, textEvent(`event ${seq}`, seq))).status);
          }
        }),
      );
      // Two kills while events are being processed, each followed by a new worker.
      for (const after of [1500, 2500]) {
        await new Promise((resolve) => setTimeout(resolve, after));
        await kill(worker);
        worker = await startScript(SCRIPT, [server.url, String(CONCURRENCY)]);
        all.push(worker);
      }
      await posting;
      expect(statuses.filter((s) => s !== 200)).toEqual([]);

      const deadline = Date.now() + 60_000;
      while ((await redis.zcard('bull:chaos-in:completed')) < EVENTS && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // One job per MsgKey, every one completed, none failed.
      expect(await redis.zcard('bull:chaos-in:completed')).toBe(EVENTS);
      expect(await redis.zcard('bull:chaos-in:failed')).toBe(0);

      const done = new Map<string, number>();
      for (const running of all)
        for (const key of lines(running, 'done')) done.set(key, (done.get(key) ?? 0) + 1);
      const keys = Array.from(
        { length: EVENTS },
        (_, i) => (textEvent('', i + 1).data as { MsgKey: string }).MsgKey,
      );
      expect(keys.filter((key) => !done.has(key))).toEqual([]);
      // A handler runs again only for an event a killed worker had started and not finished with
      // BullMQ: at most its concurrency per kill. Every other event completed once.
      const killed = all.slice(0, 2);
      const again = [...done].filter(([, n]) => n > 1).map(([key]) => key);
      expect(again.length).toBeLessThanOrEqual(2 * CONCURRENCY);
      for (const key of again) expect(killed.some((r) => lines(r, 'start').includes(key))).toBe(true);
      expect(killed.every((r) => lines(r, 'start').length > 0)).toBe(true);
    } finally {
      await receiver.close();
      await inbox.close();
      await redis.quit();
    }
  }, 120_000);
});
