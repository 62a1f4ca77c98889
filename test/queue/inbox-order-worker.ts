// Run as a child process by the inbox order test and bench/inbox-order.bench.ts: one inbox worker.
// Args: the Redis URL, the concurrency, the queue's name, the order ('sender' or 'none'). For each
// message event its handler RPUSHes the event's MsgSeq to `handled:<From_Account>` and counts it in
// `handled` (after a trivial async step) before it returns. Prints `ready`; runs until it is killed.
import { createInbox } from '../../src/queue/index.js';
import { isMessageEvent } from '../../src/webhook/index.js';
import { redisClient } from '../redis/redis-client.js';

const [redisUrl = '', concurrency = '8', name = 'order-in', order = 'sender'] = process.argv.slice(2);
const redis = redisClient(redisUrl);
const inbox = createInbox({ connection: { url: redisUrl }, name, order: order as 'sender' | 'none' });
inbox.work(
  async (event) => {
    if (!isMessageEvent(event)) return;
    await new Promise((resolve) => setImmediate(resolve));
    // Two commands, not a MULTI: on a Redis Cluster the two keys are in different slots. Counted
    // after it is recorded, so that a count reached means the records are there.
    await redis.rpush(`handled:${event.data.From_Account}`, String(event.data.MsgSeq));
    await redis.incr('handled');
  },
  { concurrency: Number(concurrency), lockDurationMs: 2000 },
);
process.stdout.write('ready\n');
