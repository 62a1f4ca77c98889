/**
 * One outbox for every account (`outbox.work({ accounts })`, a local redis-server, the fake OA server
 * with its quota off, in this process): what the turns cost beside the single-account outbox.
 *
 * - Dispatch cost while idle: Redis commands per second of one idle worker when 10,000 accounts have
 *   had jobs, against 1 account (goal <= 1.1x).
 * - Enqueue: `outbox.addMany` of 100,000 sends across 1,000 accounts, against BullMQ's own `addBulk`
 *   of the same jobs in chunks of 1,000 (goal >= 0.9x).
 * - Dispatch rate: one worker process (concurrency 32) draining 5,000 sends spread over 1,000 busy
 *   accounts, against the single-account outbox draining 5,000, limits raised so they never bind
 *   (goal >= 0.8x).
 *
 * Quota use under backlog and the small accounts' waits are measured by the tests
 * (test/queue/outbox-accounts*.test.ts), against the fake's enforced quota across processes.
 *
 *   npx tsx bench/outbox-accounts.bench.ts
 */
import { rmSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccounts, OAClient } from '../src/index.js';
import { createOutbox, type OutboxEntry } from '../src/queue/index.js';
import { createMockServer } from '../src/testing/index.js';
import { fmt, report, spawnRedisServer, table } from './support.js';

const IDLE_ACCOUNTS = 10_000;
const ENQUEUE = 100_000;
const ENQUEUE_ACCOUNTS = 1_000;
const DRAIN = 5_000;
const CONCURRENCY = 32;
const UNBOUND = {
  general: { max: 1_000_000, windowMs: 60_000 },
  upload: { max: 1_000_000, windowMs: 60_000 },
};

const { redis: server, url, dir } = await spawnRedisServer();
const admin = new Redis(url);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (i: number) => ({ user_id: `user-${i}`, msg: `message ${i}` });

const processed = async () =>
  Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? 0);

// 1. Idle dispatch cost: Redis commands per second of one idle worker.
async function idleCost(name: string, accounts: number): Promise<number> {
  const outbox = createOutbox({ connection: { url }, name });
  const entries: OutboxEntry[] = Array.from({ length: accounts }, (_, i) => ({
    method: 'sendText',
    params: text(i),
    key: 'k',
    account: `acct-${i}`,
  }));
  await outbox.addMany(entries);
  // Every account has had a job: cancelled now, so that none has work.
  for (let i = 0; i < accounts; i += 500) {
    await Promise.all(
      entries.slice(i, i + 500).map((e) => outbox.cancel(e.key, { account: e.account as string })),
    );
  }
  const accountsOf = createAccounts({ credentials: () => undefined });
  const worker = outbox.work({ accounts: accountsOf, concurrency: CONCURRENCY });
  await sleep(1000);
  const before = await processed();
  const started = performance.now();
  await sleep(5000);
  const perSecond = ((await processed()) - before - 1) / ((performance.now() - started) / 1000);
  await worker.close();
  await outbox.close();
  await accountsOf.close();
  return perSecond;
}
const idleOne = await idleCost('idle-1', 1);
const idleMany = await idleCost('idle-many', IDLE_ACCOUNTS);

// 2. Enqueue: addMany across accounts against BullMQ's addBulk.
const enqueueEntries: OutboxEntry[] = Array.from({ length: ENQUEUE }, (_, i) => ({
  method: 'sendText',
  params: text(i),
  key: `e-${i}`,
  account: `acct-${i % ENQUEUE_ACCOUNTS}`,
}));
const outboxEnqueue = createOutbox({ connection: { url }, name: 'enqueue' });
await outboxEnqueue.counts();
let started = performance.now();
await outboxEnqueue.addMany(enqueueEntries);
const outboxMs = performance.now() - started;
await outboxEnqueue.close();
const bull = new Queue('bull-enqueue', { connection: new Redis(url, { maxRetriesPerRequest: null }) });
await bull.waitUntilReady();
started = performance.now();
for (let i = 0; i < ENQUEUE; i += 1000) {
  await bull.addBulk(
    enqueueEntries
      .slice(i, i + 1000)
      .map((e) => ({ name: e.method, data: e, opts: { jobId: `k-${e.key}` } })),
  );
}
const bullMs = performance.now() - started;
await bull.close();

// 3. Dispatch rate: one worker, 1,000 busy accounts against one account.
const mock = await createMockServer({
  rateLimit: false,
  accounts: Array.from({ length: ENQUEUE_ACCOUNTS }, (_, i) => ({
    username: `acct-${i}`,
    apiKey: `key-${i}`,
    apiSecret: `secret-${i}-abcdefgh`,
  })),
});
/** Sends per second, and Redis commands per send (scripts count once). */
async function drain(name: string, withAccounts: boolean): Promise<[number, number]> {
  const outbox = createOutbox({ connection: { url }, name });
  await outbox.addMany(
    Array.from({ length: DRAIN }, (_, i) => ({
      method: 'sendText' as const,
      params: text(i),
      key: `d-${i}`,
      ...(withAccounts ? { account: `acct-${i % ENQUEUE_ACCOUNTS}` } : {}),
    })),
  );
  const client = new OAClient({
    baseUrl: mock.url,
    apiKey: 'key-0',
    apiSecret: 'secret-0-abcdefgh',
    rateLimit: UNBOUND,
  });
  const accounts = createAccounts({
    credentials: (id) => {
      const i = id.slice('acct-'.length);
      return { apiKey: `key-${i}`, apiSecret: `secret-${i}-abcdefgh` };
    },
    clientOptions: { baseUrl: mock.url, rateLimit: UNBOUND },
  });
  const commandsBefore = await processed();
  const begun = performance.now();
  const worker = withAccounts
    ? outbox.work({ accounts, concurrency: CONCURRENCY })
    : outbox.work({ client, concurrency: CONCURRENCY });
  for (;;) {
    const c = await outbox.counts();
    if (c.delivered + c.failed + c.unknown >= DRAIN) break;
    if (performance.now() - begun > 300_000) throw new Error(`not drained: ${JSON.stringify(c)}`);
    await sleep(50);
  }
  const perSecond = DRAIN / ((performance.now() - begun) / 1000);
  const perSend = ((await processed()) - commandsBefore) / DRAIN;
  await worker.close();
  await outbox.close();
  await client.close();
  await accounts.close();
  return [perSecond, perSend];
}
const [single, singleCommands] = await drain('drain-single', false);
const [many, manyCommands] = await drain('drain-accounts', true);
// The fleet the API's quota asks for: 10,000 accounts at 200 sends a minute each.
const fleetRate = (10_000 * 200) / 60;
await mock.close();

await admin.quit();
server.kill('SIGKILL');
rmSync(dir, { recursive: true, force: true });

const idleRatio = idleMany / idleOne;
const enqueueRatio = bullMs / outboxMs;
const drainRatio = many / single;
report({
  title: 'Outbox: one outbox for every account',
  command: 'npx tsx bench/outbox-accounts.bench.ts',
  rows: [
    {
      figure: `outbox turns, Redis commands/s of an idle worker, ${fmt(IDLE_ACCOUNTS)} accounts against 1`,
      sdk: `${fmt(idleMany, 1)}/s`,
      baseline: `${fmt(idleOne, 1)}/s`,
      ratio: idleRatio.toFixed(2),
      goal: '<= 1.1',
      pass: idleRatio <= 1.1,
    },
    {
      figure: `outbox addMany, ${fmt(ENQUEUE)} sends across ${fmt(ENQUEUE_ACCOUNTS)} accounts, against BullMQ addBulk`,
      sdk: `${fmt(ENQUEUE / (outboxMs / 1000))}/s`,
      baseline: `${fmt(ENQUEUE / (bullMs / 1000))}/s`,
      ratio: enqueueRatio.toFixed(2),
      goal: '>= 0.9',
      pass: enqueueRatio >= 0.9,
    },
    {
      figure: `outbox sends/s of one worker, ${fmt(ENQUEUE_ACCOUNTS)} busy accounts against one account`,
      sdk: `${fmt(many)}/s`,
      baseline: `${fmt(single)}/s`,
      ratio: drainRatio.toFixed(2),
      goal: '>= 0.8',
      pass: drainRatio >= 0.8,
    },
  ],
  details: [
    'A local redis-server; the fake OA server (quota off) and the workers in this process.',
    `Idle: one \`outbox.work({ accounts })\` with nothing to send, Redis's \`total_commands_processed\` over 5 s,`,
    `after ${fmt(IDLE_ACCOUNTS)} accounts (or 1) each had a job (added, then cancelled).`,
    `Enqueue: \`addMany\` of ${fmt(ENQUEUE)} texts over ${fmt(ENQUEUE_ACCOUNTS)} accounts (the key check, the parked jobs, the`,
    "accounts' lanes) against BullMQ's `Queue.addBulk` of the same jobs, 1,000 a call.",
    `Dispatch: ${fmt(DRAIN)} texts drained by one worker (concurrency ${CONCURRENCY}), spread over ${fmt(ENQUEUE_ACCOUNTS)} accounts`,
    "(each sent through its account's client, its first send logging it in) against one client.",
    '',
    table(
      ['figure', 'outbox', 'baseline'],
      [
        [
          'idle worker, Redis commands/s',
          `${fmt(idleMany, 1)} (${fmt(IDLE_ACCOUNTS)} accounts)`,
          `${fmt(idleOne, 1)} (1 account)`,
        ],
        ['enqueue', `${fmt(outboxMs)} ms`, `${fmt(bullMs)} ms (addBulk)`],
        ['drain', `${fmt(many)}/s (${fmt(ENQUEUE_ACCOUNTS)} accounts)`, `${fmt(single)}/s (1 account)`],
        [
          'Redis commands per send while draining (the counts poll included)',
          fmt(manyCommands, 1),
          fmt(singleCommands, 1),
        ],
      ],
    ),
    '',
    `At the API's quota, 10,000 accounts send ${fmt(fleetRate)} texts a second. At ${fmt(many)} sends a second per`,
    `worker process (this machine, the fake sharing its cores), that is about ${fmt(Math.ceil(fleetRate / many))} worker processes. Each`,
    `send costs about ${fmt(manyCommands, 1)} commands as Redis counts them (each command inside a script counted, the`,
    "progress poll included), plus a few of each account's coordination (a limiter slot taken and ended):",
    `some ${fmt((fleetRate * (manyCommands + 5)) / 1_000_000, 1)} million a second. Taking about a million such commands a second per Redis`,
    "master (an assumption, not measured here: measure yours with the fleet's own hardware), that is about",
    `${fmt(Math.ceil((fleetRate * (manyCommands + 5)) / 1_000_000) + 1)} masters with room to spare. One outbox is one BullMQ queue, on one master (its keys share`,
    'one hash tag on a Cluster): the fleet splits its accounts over as many outboxes (a name per shard,',
    "e.g. a hash of the account id), each account's coordination keys on the master of their own tag.",
  ].join('\n'),
});
