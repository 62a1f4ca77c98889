/**
 * Outbox throughput on a Redis Cluster (3 masters, on loopback) beside a single redis-server: queued
 * sends drained by workers in this process, against the fake OA server in its own process (no quota to
 * wait for: the queue is what is measured). With 1 account (one queue) and with 100 accounts (a queue
 * each, which a cluster spreads over its masters). Like for like: no persistence and no replica on
 * either (a replica costs a single Redis as much as a cluster's master: on one machine its CPU is taken
 * from the rest, about 14% of a single Redis's throughput on 2 cores). Needs redis-server and
 * redis-cli on PATH (or REDIS_SERVER).
 *
 *   npx tsx bench/cluster.bench.ts
 */
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { Redis } from 'ioredis';
import { OAClient } from '../src/index.js';
import { createOutbox, type Outbox, type OutboxEntry } from '../src/queue/index.js';
import { startRedisCluster } from '../test/redis/redis-cluster.js';
import { fmt, median, report, spawnFakeServer, spawnRedisServer, table } from './support.js';

const SENDS = 3_000;
const CONCURRENCY = 32;
const ROUNDS = 7;
const GOAL_ONE = 0.9;

const single = await spawnRedisServer();
const cluster = await startRedisCluster({ appendonly: false, replicas: 0 });
const { server, url: baseUrl } = await spawnFakeServer({ max: 1_000_000, windowMs: 1_000 }, false);
const client = new OAClient({
  baseUrl,
  apiKey: 'test-api-key',
  apiSecret: 'test-api-secret',
  rateLimit: { general: { max: 1_000_000, windowMs: 1_000 } },
});

let run = 0;
/** Sends per second: `accounts` queues of SENDS / accounts sends each, all drained at once. */
async function drain(url: string, accounts: number): Promise<number> {
  run++;
  const outboxes: Outbox[] = Array.from({ length: accounts }, (_, i) =>
    createOutbox({ connection: { url }, name: `bench-${run}-${i}` }),
  );
  const per = SENDS / accounts;
  await Promise.all(
    outboxes.map((outbox, a) => {
      function* sends(): Generator<OutboxEntry> {
        for (let i = 0; i < per; i++) {
          yield { method: 'sendText', params: { user_id: `u-${i}`, msg: `m ${i}` }, key: `k-${a}-${i}` };
        }
      }
      return outbox.addMany(sends());
    }),
  );
  const started = performance.now();
  const workers = outboxes.map((outbox) =>
    outbox.work({ client, concurrency: Math.max(1, Math.round(CONCURRENCY / accounts)) }),
  );
  for (;;) {
    const counts = await Promise.all(outboxes.map((outbox) => outbox.counts()));
    if (counts.every((c) => c.delivered + c.failed + c.unknown === per)) break;
    if (performance.now() - started > 300_000) throw new Error('not drained in 5 minutes');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const rate = SENDS / ((performance.now() - started) / 1000);
  await Promise.all(workers.map((worker) => worker.close()));
  await Promise.all(outboxes.map((outbox) => outbox.close()));
  return rate;
}

// Each master's share of the commands of the cluster's drains, by account count: how the work spreads.
const masters = await Promise.all((await cluster.masters()).map((port) => new Redis(port, '127.0.0.1')));
const processedBy = () =>
  Promise.all(
    masters.map(async (node) =>
      Number(/total_commands_processed:(\d+)/.exec(await node.info('stats'))?.[1] ?? 0),
    ),
  );
/** Each cluster drain's busiest master's share of the commands, by account count. */
const busiest: Record<number, number[]> = { 1: [], 100: [] };

// Interleaved rounds, single Redis and cluster for each account count, the one that goes first taking
// turns from round to round (a drain runs a little faster or slower after another): the median of the
// rounds' ratios is the figure, the median rates are shown beside it.
const rates: Record<string, number[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  for (const accounts of [1, 100]) {
    const pair = [
      ['single', single.url],
      ['cluster', cluster.url],
    ] as const;
    for (const [name, url] of round % 2 === 0 ? pair : [...pair].reverse()) {
      const before = name === 'cluster' ? await processedBy() : [];
      const rate = await drain(url, accounts);
      if (name === 'cluster') {
        const after = await processedBy();
        const counted = after.map((n, i) => n - (before[i] ?? 0));
        const total = counted.reduce((sum, n) => sum + n, 0);
        busiest[accounts]?.push(Math.max(...counted) / total);
      }
      const key = `${name} ${accounts}`;
      rates[key] = [...(rates[key] ?? []), rate];
      console.log(`round ${round + 1}: ${name}, ${accounts} account(s): ${fmt(rate)} sends/s`);
    }
  }
}

await Promise.all(masters.map((node) => node.quit()));
await client.close();
server.stdin.end();
await once(server, 'exit');
await cluster.stop();
single.redis.kill('SIGKILL');
rmSync(single.dir, { recursive: true, force: true });

const m = (key: string) => median(rates[key] ?? []);
/** The median of each round's cluster over single (the pairs ran back to back), as the other benches. */
const paired = (accounts: number) =>
  median(
    (rates[`cluster ${accounts}`] ?? []).map((rate, i) => rate / (rates[`single ${accounts}`]?.[i] ?? rate)),
  );
const one = paired(1);
const many = paired(100);
const growth = m('cluster 100') / m('cluster 1');
const busiestShare = (accounts: number) => `${Math.round(100 * median(busiest[accounts] ?? []))}%`;
const roundsOf = (accounts: number) =>
  (rates[`single ${accounts}`] ?? [])
    .map((rate, i) => `${fmt(rate)} / ${fmt(rates[`cluster ${accounts}`]?.[i] ?? 0)}`)
    .join(', ');
report({
  title: 'Outbox on a Redis Cluster beside a single Redis',
  command: 'npx tsx bench/cluster.bench.ts',
  rows: [
    {
      figure: `outbox sends/s on a Redis Cluster (3 masters), 1 account, ${fmt(SENDS)} sends`,
      sdk: `${fmt(m('cluster 1'))}/s`,
      baseline: `${fmt(m('single 1'))}/s single Redis`,
      ratio: one.toFixed(2),
      goal: `>= ${GOAL_ONE}`,
      pass: one >= GOAL_ONE,
    },
    {
      figure: `outbox sends/s on a Redis Cluster (3 masters), 100 accounts, ${fmt(SENDS)} sends`,
      sdk: `${fmt(m('cluster 100'))}/s`,
      baseline: `${fmt(m('single 100'))}/s single Redis`,
      ratio: many.toFixed(2),
    },
  ],
  details: [
    `${fmt(SENDS)} texts queued with \`outbox.addMany\`, then drained by \`outbox.work\` in this process (concurrency`,
    `${CONCURRENCY} in all: one worker of ${CONCURRENCY} for 1 account; for 100 accounts a queue each, with a worker`,
    'of concurrency 1 each), against the fake OA server in its own process without a quota. The',
    'cluster: 3 masters on loopback; the single Redis: one redis-server; like for like, neither persists',
    'nor has a replica (a replica costs either the same: on one machine it takes CPU from the rest).',
    `${ROUNDS} interleaved rounds (which of the two goes first alternates): the median rates, and the median of the`,
    "rounds' own ratios (cluster over single, each pair run back to back). Every Redis process, the workers and the fake share one",
    "machine's cores: the cluster's masters cannot add CPU here, so the 100-account figure shows what the",
    'cluster costs, not how it scales on separate hosts.',
    '',
    table(
      [
        'accounts',
        'single Redis',
        'Redis Cluster',
        "cluster / single (the rounds' ratios)",
        'of the medians',
      ],
      [
        [
          '1',
          `${fmt(m('single 1'))}/s`,
          `${fmt(m('cluster 1'))}/s`,
          one.toFixed(2),
          (m('cluster 1') / m('single 1')).toFixed(2),
        ],
        [
          '100',
          `${fmt(m('single 100'))}/s`,
          `${fmt(m('cluster 100'))}/s`,
          many.toFixed(2),
          (m('cluster 100') / m('single 100')).toFixed(2),
        ],
      ],
      '---:|---:|---:|---:|---:',
    ),
    '',
    `Rounds, single / cluster sends/s: 1 account ${roundsOf(1)}; 100 accounts ${roundsOf(100)}.`,
    `On the cluster, 100 accounts over 1 account: ${growth.toFixed(2)}x.`,
    `The busiest master's share of the commands of a cluster drain (\`total_commands_processed\` of each, median`,
    `of the rounds): ${busiestShare(1)} with 1 account, ${busiestShare(100)} with 100 (of 3 masters). One queue is one hash tag, so`,
    'one master; many queues spread over the masters, so where each master has cores of its own the',
    'throughput grows with them.',
  ].join('\n'),
});
process.exit();
