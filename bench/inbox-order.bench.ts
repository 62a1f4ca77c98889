/**
 * The inbox's `order: 'sender'` beside the unordered inbox: 3 worker processes (`inbox.work`,
 * concurrency 8 each) on a local redis-server, 200 users each sending 10 messages in a burst (every
 * user at once, each user's messages in order), a handler doing a trivial async step and recording the
 * event in Redis. Throughput is the events over the time from the first `store` to the last event
 * handled. Rounds of each order alternate; the median round counts. Needs redis-server on PATH (or
 * REDIS_SERVER).
 *
 *   npx tsx bench/inbox-order.bench.ts
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { createInbox } from '../src/queue/index.js';
import type { WebhookEvent } from '../src/webhook/index.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { fmt, median, report, table } from './support.js';

const USERS = 200;
const MESSAGES = 10;
const WORKERS = 3;
const CONCURRENCY = 8;
const ROUNDS = 5;
const GOAL = 0.8;
const ORDERS = ['sender', 'none'] as const;
type Order = (typeof ORDERS)[number];

const children: ChildProcess[] = [];
const stopAll = () => {
  for (const child of children) child.kill('SIGKILL');
};
process.on('exit', stopAll);

const redisServer = await startRedisServer();
const { url } = redisServer;
const redis = new Redis(url);

// The test's worker: it records each message event and counts it in `handled`.
const workerScript = new URL('../test/queue/inbox-order-worker.ts', import.meta.url).pathname;
const inboxes = Object.fromEntries(
  ORDERS.map((order) => [order, createInbox({ connection: { url }, name: `bench-${order}`, order })]),
) as Record<Order, ReturnType<typeof createInbox>>;
await Promise.all(
  ORDERS.flatMap((order) =>
    Array.from({ length: WORKERS }, async () => {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', workerScript, url, String(CONCURRENCY), `bench-${order}`, order],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      children.push(child);
      await once(child.stdout, 'data');
    }),
  ),
);

const message = (round: number, user: number, seq: number) =>
  ({
    event_type: 'message',
    username: 'oa_bench',
    data: {
      CallbackCommand: 'C2C.CallbackAfterSendMsg',
      From_Account: `r${round}-u${user}`,
      To_Account: 'oa_bench',
      MsgSeq: seq,
      MsgRandom: 1,
      MsgTime: 1_700_000_000 + round,
      MsgKey: `${seq}_1_${round}`,
      MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: `message ${seq}` } }],
    },
  }) as unknown as WebhookEvent;

/** One burst into the inbox of `order`; resolves with events per second, first store to last handled. */
async function round(order: Order, index: number): Promise<number> {
  await redis.set('handled', 0);
  const inbox = inboxes[order];
  const total = USERS * MESSAGES;
  const started = performance.now();
  const storing = Promise.all(
    Array.from({ length: USERS }, async (_, user) => {
      for (let seq = 1; seq <= MESSAGES; seq++) await inbox.store(message(index, user, seq));
    }),
  );
  while (Number(await redis.get('handled')) < total) {
    if (performance.now() - started > 120_000) throw new Error(`${order}: not drained`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const elapsed = performance.now() - started;
  await storing;
  return (total / elapsed) * 1000;
}

const rates: Record<Order, number[]> = { sender: [], none: [] };
// A warm-up burst of each, not counted; then the rounds, the first order alternating.
for (const order of ORDERS) await round(order, 0);
for (let r = 1; r <= ROUNDS; r++) {
  for (const order of r % 2 ? ORDERS : [...ORDERS].reverse()) rates[order].push(await round(order, r));
}
await Promise.all(ORDERS.map((order) => inboxes[order].close()));
await redis.quit();
stopAll();
await redisServer.stop();

const ordered = median(rates.sender);
const unordered = median(rates.none);
const ratio = ordered / unordered;
const events = `${USERS} users x ${MESSAGES} messages`;
report({
  title: "Inbox: order: 'sender' beside the unordered inbox",
  command: 'npx tsx bench/inbox-order.bench.ts',
  rows: [
    {
      figure: `inbox throughput with order: 'sender', ${events}, ${WORKERS} worker processes`,
      sdk: `${fmt(ordered)} events/s`,
      baseline: `${fmt(unordered)} events/s unordered`,
      ratio: ratio.toFixed(2),
      goal: `>= ${GOAL}`,
      pass: ratio >= GOAL,
    },
  ],
  details: [
    `${WORKERS} worker processes per inbox (\`inbox.work\`, concurrency ${CONCURRENCY} each) on one local redis-server;`,
    `${USERS} users each send ${MESSAGES} messages in a burst: every user at once, each user's messages stored in`,
    'order with `inbox.store`. The handler takes one trivial async step and records the event in Redis. Throughput',
    'is the events over the time from the first store to the last event handled, stores included. A warm-up',
    `burst of each inbox, then ${ROUNDS} rounds of each, the order alternating; the median round counts.`,
    "With `order: 'sender'` each user's messages are handled one at a time, in order, across the processes.",
    '',
    table(
      ['order', ...Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`), 'median'],
      ORDERS.map((order) => [
        `\`${order}\``,
        ...rates[order].map((rate) => `${fmt(rate)}/s`),
        `${fmt(median(rates[order]))}/s`,
      ]),
      `---|${Array.from({ length: ROUNDS + 1 }, () => '---:').join('|')}`,
    ),
  ].join('\n'),
});
