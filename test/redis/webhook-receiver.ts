// Run as a child process by webhook-processes.test.ts: one instance of a webhook receiver behind a
// load balancer, deduplicating through Redis. It prints `listening <url>`, then one line per onEvent:
// `processed <MsgSeq>` or `failed <MsgSeq>`. Messages whose text is `flaky` fail their first attempt
// across every instance (counted in Redis); messages whose text is `hang` print `started <MsgSeq>` and
// never end their first attempt (the test kills that process). An optional second argument is the
// dedupe claimTtlMs. It stops when its stdin closes.
import { createRedisDedupeStore } from '../../src/redis/index.js';
import { createWebhookHandler, getMessageText, isMessageEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { redisClient } from './redis-client.js';

const redisUrl = process.argv[2] ?? '';
const redis = redisClient(redisUrl);
const store = createRedisDedupeStore({ url: redisUrl, prefix: 'test:' });
const claimTtlMs = process.argv[3] === undefined ? undefined : Number(process.argv[3]);

const handler = createWebhookHandler({
  dedupe: { store, waitTimeoutMs: 2000, claimTtlMs },
  onEvent: async (event) => {
    if (!isMessageEvent(event)) throw new Error('not a message');
    const seq = String(event.data.MsgSeq);
    // Long enough for duplicates to arrive at the other instance while this one is in onEvent.
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 20));
    if (getMessageText(event) === 'hang' && (await redis.incr(`attempts:${seq}`)) === 1) {
      process.stdout.write(`started ${seq}\n`);
      await new Promise(() => {});
    }
    if (getMessageText(event) === 'flaky' && (await redis.incr(`attempts:${seq}`)) === 1) {
      process.stdout.write(`failed ${seq}\n`);
      throw new Error('the first attempt fails');
    }
    process.stdout.write(`processed ${seq}\n`);
  },
});
const server = await listen((req, res) => void handler(req, res));
process.stdout.write(`listening ${server.url}\n`);

process.stdin.resume();
process.stdin.on('end', async () => {
  await server.close();
  await store.close();
  await redis.quit();
});
