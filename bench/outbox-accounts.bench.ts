/**
 * One outbox for every account (`outbox.work({ accounts })`, a local redis-server, the fake OA server
 * with its quota off, in this process): what the turns cost beside the single-account outbox.
 *
 * - Dispatch cost while idle: Redis commands per second of one idle worker when 10,000 accounts have
 *   had jobs, against 1 account (goal <= 1.1x).
 * - Enqueue: `outbox.addMany` of 100,000 sends across 1,000 accounts, against BullMQ's own `addBulk`
 *   of the same jobs in chunks of 1,000 (goal >= 0.9x).
 * - Dispatch rate: one worker process (concurrency 32) draining 15,000 sends spread over 1,000 busy
 *   accounts, against the single-account outbox draining 15,000, limits raised so they never bind
 *   (goal >= 0.8x); a round of each first, not counted, to warm them up.
 *
 * - Fairness: 2 worker processes serving 20 accounts of the fake, which enforces each account's quota
 *   (the API's 200 a minute raised to 20 per 2 s, so that it runs in half a minute): 2 accounts with a
 *   campaign of 250 `bulk` sends each, 18 small accounts adding a few sends while they run, and replies
 *   of the campaign accounts. Each campaign account's quota use with `replyReserve: 0` (goal >= 0.98,
 *   no 429), its campaign's own use with the default `replyReserve` (0.1: goal >= 0.85), and the small
 *   accounts' wait from `add` to the fake receiving the send (p99, goal <= one quota slot + 2 s).
 *
 *   npx tsx bench/outbox-accounts.bench.ts
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccounts, OAClient } from '../src/index.js';
import { createOutbox, type OutboxEntry } from '../src/queue/index.js';
import { createMockServer } from '../src/testing/index.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { fmt, median, percentile, report, table } from './support.js';

const IDLE_ACCOUNTS = 10_000;
const ENQUEUE = 100_000;
const ENQUEUE_ACCOUNTS = 1_000;
const DRAIN = 15_000;
const CONCURRENCY = 32;
const ENQUEUE_ROUNDS = 3;
/** A multiple of the 3 kinds of drain: each goes first, second and last as many times. */
const DRAIN_ROUNDS = 9;
const UNBOUND = {
  general: { max: 1_000_000, windowMs: 60_000 },
  upload: { max: 1_000_000, windowMs: 60_000 },
};

const redisServer = await startRedisServer();
const { url } = redisServer;
const admin = new Redis(url);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (i: number) => ({ user_id: `user-${i}`, msg: `message ${i}` });

const processed = async () =>
  Number(/total_commands_processed:(\d+)/.exec(await admin.info('stats'))?.[1] ?? 0);
/** CPU seconds the redis-server has used (user and system). */
const redisCpu = async () => {
  const info = await admin.info('cpu');
  const of = (field: string) => Number(new RegExp(`${field}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return of('used_cpu_user') + of('used_cpu_sys');
};

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
// Rounds taking turns (the order alternating), each on fresh keys: the median round's ratio counts.
const outboxRounds: number[] = [];
const bullRounds: number[] = [];
for (let round = 0; round < ENQUEUE_ROUNDS; round++) {
  const timeOutbox = async () => {
    const outbox = createOutbox({ connection: { url }, name: `enqueue-${round}` });
    await outbox.counts();
    const begun = performance.now();
    await outbox.addMany(enqueueEntries);
    outboxRounds.push(performance.now() - begun);
    await outbox.close();
  };
  const timeBull = async () => {
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const bull = new Queue(`bull-enqueue-${round}`, { connection });
    await bull.waitUntilReady();
    const begun = performance.now();
    for (let i = 0; i < ENQUEUE; i += 1000) {
      await bull.addBulk(
        enqueueEntries.slice(i, i + 1000).map((e) => ({
          name: e.method,
          data: e,
          opts: { jobId: `k-${e.key}` },
        })),
      );
    }
    bullRounds.push(performance.now() - begun);
    // BullMQ leaves a connection it was given open.
    await bull.close();
    await connection.quit();
  };
  // The order alternates from round to round.
  const runs = round % 2 === 0 ? [timeOutbox, timeBull] : [timeBull, timeOutbox];
  for (const run of runs) await run();
  await admin.flushall();
}
const enqueueRatios = outboxRounds.map((ms, i) => (bullRounds[i] ?? 0) / ms);
const enqueueRatio = median(enqueueRatios);
const outboxMs = median(outboxRounds);
const bullMs = median(bullRounds);

// 3. Dispatch rate: one worker, 1,000 busy accounts against one account.
const mock = await createMockServer({
  rateLimit: false,
  accounts: Array.from({ length: ENQUEUE_ACCOUNTS }, (_, i) => ({
    username: `acct-${i}`,
    apiKey: `key-${i}`,
    apiSecret: `secret-${i}-abcdefgh`,
  })),
});
/**
 * Sends per second, Redis commands per send (each inside a script counted), and Redis CPU ms per send.
 * `fed`: one client's jobs, handed to BullMQ while the worker drains them (the floor of a hand-over at
 * each job's turn through BullMQ's public API): `addMany` of what its wait list lacks of twice the
 * worker's concurrency once that is at least the concurrency, as the outbox's dispatch loop keeps it,
 * instead of all of them before.
 */
async function drain(name: string, withAccounts: boolean, fed = false): Promise<[number, number, number]> {
  const outbox = createOutbox({ connection: { url }, name });
  const entries = Array.from({ length: DRAIN }, (_, i) => ({
    method: 'sendText' as const,
    params: text(i),
    key: `d-${i}`,
    ...(withAccounts ? { account: `acct-${i % ENQUEUE_ACCOUNTS}` } : {}),
  }));
  if (!fed) await outbox.addMany(entries);
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
  // Logged in before the clock starts, as a worker serving busy accounts is (a token lasts hours): what
  // is timed is the dispatch, not 1,000 logins against 1.
  if (withAccounts) {
    await Promise.all(
      Array.from({ length: ENQUEUE_ACCOUNTS }, (_, i) => accounts.client(`acct-${i}`).generateToken()),
    );
  } else {
    await client.generateToken();
  }
  const commandsBefore = await processed();
  const cpuBefore = await redisCpu();
  const begun = performance.now();
  const worker = withAccounts
    ? outbox.work({ accounts, concurrency: CONCURRENCY })
    : outbox.work({ client, concurrency: CONCURRENCY });
  const feeding = fed ? feed(name, outbox, entries) : undefined;
  for (;;) {
    const c = await outbox.counts();
    if (c.delivered + c.failed + c.unknown >= DRAIN) break;
    if (performance.now() - begun > 300_000) throw new Error(`not drained: ${JSON.stringify(c)}`);
    await sleep(50);
  }
  const perSecond = DRAIN / ((performance.now() - begun) / 1000);
  await feeding;
  const perSend = ((await processed()) - commandsBefore) / DRAIN;
  const cpuPerSend = (((await redisCpu()) - cpuBefore) * 1000) / DRAIN;
  await worker.close();
  await outbox.close();
  await client.close();
  await accounts.close();
  return [perSecond, perSend, cpuPerSend];
}
/** Hands `entries` to the outbox's queue as its worker drains it (see `drain`). */
async function feed(name: string, outbox: ReturnType<typeof createOutbox>, entries: OutboxEntry[]) {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue(name, { connection });
  try {
    for (let next = 0; next < entries.length; ) {
      const room = 2 * CONCURRENCY - (await queue.getWaitingCount());
      if (room < CONCURRENCY) {
        await sleep(1);
        continue;
      }
      await outbox.addMany(entries.slice(next, next + room));
      next += room;
    }
  } finally {
    await queue.close();
    await connection.quit();
  }
}

// Interleaved rounds, the one that goes first turning: the median round's figures, and the median of
// each round's ratio.
const singleRounds: [number, number, number][] = [];
const manyRounds: [number, number, number][] = [];
const fedRounds: [number, number, number][] = [];
// A round of each, not counted: the first drain of a process runs its code cold.
await drain('drain-warm-single', false);
await drain('drain-warm-accounts', true);
await drain('drain-warm-fed', false, true);
for (let round = 0; round < DRAIN_ROUNDS; round++) {
  const order = [
    async () => singleRounds.push(await drain(`drain-single-${round}`, false)),
    async () => manyRounds.push(await drain(`drain-accounts-${round}`, true)),
    async () => fedRounds.push(await drain(`drain-fed-${round}`, false, true)),
  ];
  for (let i = 0; i < order.length; i++) await order[(i + round) % order.length]?.();
}
const medianOf = (rounds: [number, number, number][], i: 0 | 1 | 2) => median(rounds.map((r) => r[i]));
const [single, singleCommands, singleCpu] = [0, 1, 2].map((i) => medianOf(singleRounds, i as 0 | 1 | 2)) as [
  number,
  number,
  number,
];
const [many, manyCommands, manyCpu] = [0, 1, 2].map((i) => medianOf(manyRounds, i as 0 | 1 | 2)) as [
  number,
  number,
  number,
];
const drainRatios = manyRounds.map(([rate], i) => rate / (singleRounds[i]?.[0] ?? rate));
const fedRatios = fedRounds.map(([rate], i) => rate / (singleRounds[i]?.[0] ?? rate));
const fed = medianOf(fedRounds, 0);
// The fleet the API's quota asks for: 10,000 accounts at 200 sends a minute each.
const fleetRate = (10_000 * 200) / 60;
await mock.close();

// 4. Fairness: campaigns and small accounts under the fake's quota, 2 worker processes.
const QUOTA = { max: 20, windowMs: 2_000 };
const SLOT_MS = QUOTA.windowMs / QUOTA.max;
const CAMPAIGN = 250;
const CAMPAIGNS = ['camp-1', 'camp-2'];
const SMALL = Array.from({ length: 18 }, (_, i) => `small-${i + 1}`);
const SMALL_SENDS = 5;
const REPLIES = 10;
const fairAccounts = [...CAMPAIGNS, ...SMALL].map((username) => ({
  username,
  apiKey: `key-${username}`,
  apiSecret: `secret-${username}-abcdefgh`,
}));
const workerScript = new URL('./outbox-worker.ts', import.meta.url).pathname;

/** One fairness run with the outbox's `replyReserve` (0: the outbox before issue 52). */
async function fairness(replyReserve: number) {
  const name = `fairness-${replyReserve}`;
  const fair = await createMockServer({ accounts: fairAccounts, rateLimit: { general: QUOTA } });
  const fairOutbox = createOutbox({ connection: { url }, name });
  await fairOutbox.addMany(
    CAMPAIGNS.flatMap((account) =>
      Array.from({ length: CAMPAIGN }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `c${i}` },
        key: `c${i}`,
        account,
        bulk: true,
      })),
    ),
  );
  const workerConfig = JSON.stringify({
    redisUrl: url,
    baseUrl: fair.url,
    limit: QUOTA,
    concurrency: 8,
    name,
    accounts: fairAccounts,
    replyReserve,
  });
  const workers = await Promise.all(
    [1, 2].map(async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', workerScript, workerConfig], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await once(child.stdout, 'data');
      return child;
    }),
  );
  // While the campaigns run (each is 25 s of its quota): every 300 ms one small account's send (each
  // small account 5 in all), and now and then a reply of a campaign account. `added`: when each `add`
  // began, by key and account.
  const added = new Map<string, number>();
  const adds: { account: string; key: string }[] = [
    ...SMALL.flatMap((account) => Array.from({ length: SMALL_SENDS }, (_, i) => ({ account, key: `s${i}` }))),
    ...Array.from({ length: REPLIES }, (_, i) => ({
      account: CAMPAIGNS[i % CAMPAIGNS.length] as string,
      key: `r${i}`,
    })),
  ].sort(() => Math.random() - 0.5);
  await sleep(3000);
  for (const { account, key } of adds) {
    added.set(`${account}/${key}`, Date.now());
    await fairOutbox.add('sendText', { user_id: 'u', msg: key }, { key, account });
    await sleep(300);
  }
  for (const account of [...CAMPAIGNS, ...SMALL]) {
    await fairOutbox.waitFor('all', { account, timeoutMs: 120_000 });
  }
  await Promise.all(
    workers.map(async (child) => {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }),
  );
  await fairOutbox.close();
  const waitsOf = (accounts: readonly string[], prefix: string) =>
    accounts.flatMap((account) =>
      fair
        .account(account)
        .deliveries.map((d) => ({ key: String(d.items[0]?.msg), at: d.at }))
        .filter((d) => d.key.startsWith(prefix))
        .map((d) => d.at - (added.get(`${account}/${d.key}`) ?? Number.NaN)),
    );
  // Quota use of a campaign account while it has a backlog: a slot comes back one window after its
  // request, so request i goes no sooner than a window after request i - max; the window over the
  // mean of those lags, from the second window on (the first fills as jobs are admitted), every
  // request counted (its login and its replies too) until its campaign's last send. A reply added
  // after that finds the account idle: its lag is the time nobody asked, not quota left unused. The
  // campaign's own use: the same, of its sends alone.
  const useOf = (at: readonly number[]) => {
    const lags = at.slice(QUOTA.max).map((t, i) => t - (at[i] ?? 0));
    const steady = lags.slice(QUOTA.max);
    return QUOTA.windowMs / (steady.reduce((sum, lag) => sum + lag, 0) / steady.length);
  };
  const campaignSends = (account: string) =>
    fair
      .account(account)
      .deliveries.filter((d) => String(d.items[0]?.msg).startsWith('c'))
      .map((d) => d.at);
  const quotaUse = CAMPAIGNS.map((account) => {
    const campaignEnd = Math.max(...campaignSends(account));
    return useOf(
      fair
        .account(account)
        .requests.filter((r) => r.at <= campaignEnd)
        .map((r) => r.at),
    );
  });
  const campaignUse = CAMPAIGNS.map((account) => useOf(campaignSends(account)));
  const result = {
    replyReserve,
    quotaUse,
    campaignUse,
    smallWaits: waitsOf(SMALL, 's'),
    replyWaits: waitsOf(CAMPAIGNS, 'r'),
    rejected: fair.accounts.flatMap((a) => a.requests).filter((r) => r.status === 429).length,
    sent: fair.accounts.reduce((n, a) => n + a.deliveries.length, 0),
  };
  await fair.close();
  return result;
}
// `replyReserve: 0` (the campaign may take every slot: the quota-use goal), then the default 0.1.
const fairRuns = [await fairness(0), await fairness(0.1)];
const [fairToday, fairReserved] = fairRuns as [
  Awaited<ReturnType<typeof fairness>>,
  Awaited<ReturnType<typeof fairness>>,
];
const minUse = Math.min(...fairToday.quotaUse);
const fairRejected = fairRuns.reduce((n, r) => n + r.rejected, 0);
const smallP99 = Math.max(...fairRuns.map((r) => percentile(r.smallWaits, 0.99)));
const reservedCampaignUse = Math.min(...fairReserved.campaignUse);
const waitGoalMs = SLOT_MS + 2000;

await admin.quit();
await redisServer.stop();

const idleRatio = idleMany / idleOne;
// Redis's CPU per send with each account's coordination (about 5 commands more a send), and the
// masters the fleet takes, each under half busy.
const redisMsPerSend = (manyCpu * (manyCommands + 5)) / manyCommands;
const redisCores = (fleetRate * redisMsPerSend) / 1000;
const masters = Math.ceil(redisCores * 2);
const drainRatio = median(drainRatios);
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
      figure: `outbox turns, quota use of each campaign account (of 2, with 18 small accounts), 2 worker processes, replyReserve 0 (429 answers)`,
      sdk: `${fmt(minUse * (QUOTA.max / QUOTA.windowMs) * 1000, 2)}/s (${fmt(fairRejected)})`,
      baseline: `${fmt((QUOTA.max / QUOTA.windowMs) * 1000, 1)}/s allowed`,
      ratio: minUse.toFixed(3),
      goal: '>= 0.98 with zero 429s',
      pass: minUse >= 0.98 && fairRejected === 0,
    },
    {
      figure: `outbox turns, each campaign's own quota use (as above), replyReserve 0.1, the default (429 answers)`,
      sdk: `${fmt(reservedCampaignUse * (QUOTA.max / QUOTA.windowMs) * 1000, 2)}/s (${fmt(fairReserved.rejected)})`,
      baseline: `${fmt((QUOTA.max / QUOTA.windowMs) * 1000, 1)}/s allowed`,
      ratio: reservedCampaignUse.toFixed(3),
      goal: '>= 0.85 with zero 429s',
      pass: reservedCampaignUse >= 0.85 && fairReserved.rejected === 0,
    },
    {
      figure:
        "outbox turns, small accounts' wait from add to sent while 2 campaigns run, p99 (the worse of replyReserve 0 and 0.1)",
      sdk: `${fmt(smallP99)} ms`,
      baseline: `${fmt(waitGoalMs)} ms (a quota slot + 2 s)`,
      ratio: (smallP99 / waitGoalMs).toFixed(2),
      goal: '<= 1',
      pass: smallP99 <= waitGoalMs && fairRejected === 0,
    },
    {
      figure: `outbox sends/s of one worker, ${fmt(ENQUEUE_ACCOUNTS)} busy accounts against one account`,
      sdk: `${fmt(many)}/s`,
      baseline: `${fmt(single)}/s`,
      ratio: drainRatio.toFixed(2),
      goal: '>= 0.8',
      pass: drainRatio >= 0.8,
    },
    {
      figure: `outbox sends/s of one worker, one client's jobs handed to BullMQ as it drains them (the hand-over's floor), against the same jobs added before`,
      sdk: `${fmt(fed)}/s`,
      baseline: `${fmt(single)}/s`,
      ratio: median(fedRatios).toFixed(2),
    },
  ],
  details: [
    'A local redis-server; the fake OA server (quota off) and the workers in this process.',
    `Idle: one \`outbox.work({ accounts })\` with nothing to send, Redis's \`total_commands_processed\` over 5 s,`,
    `after ${fmt(IDLE_ACCOUNTS)} accounts (or 1) each had a job (added, then cancelled).`,
    `Enqueue: \`addMany\` of ${fmt(ENQUEUE)} texts over ${fmt(ENQUEUE_ACCOUNTS)} accounts (the key check, each job`,
    "kept as the outbox's own record until its turn, the accounts' lanes: one script of the outbox's per 1,000 entries)",
    "against BullMQ's `Queue.addBulk` of the same jobs (no lanes), 1,000 a call (a script of BullMQ's per job).",
    `The two take turns (the order alternating), ${ENQUEUE_ROUNDS} rounds on fresh keys, the median round's ratio. The`,
    `rounds (outbox / addBulk): ${outboxRounds.map((ms, i) => `${fmt(ms)} / ${fmt(bullRounds[i] ?? 0)} ms`).join(', ')}.`,
    `Dispatch: ${fmt(DRAIN)} texts drained by one worker (concurrency ${CONCURRENCY}), spread over ${fmt(ENQUEUE_ACCOUNTS)} accounts`,
    "(each sent through its account's client, every one logged in before the clock starts) against one client:",
    `a round of each not counted (to warm them up), then ${DRAIN_ROUNDS} interleaved rounds (the order turning), the median round's figures and the median of each round's`,
    `ratio; the rounds (accounts / one client / one client fed): ${manyRounds.map(([rate], i) => `${fmt(rate)} / ${fmt(singleRounds[i]?.[0] ?? 0)} / ${fmt(fedRounds[i]?.[0] ?? 0)}`).join(', ')} sends/s.`,
    "The floor: a job of an account is handed to BullMQ at its turn (`Queue.addBulk`, BullMQ's public API), so its",
    "add is inside the drain, where the one client's jobs were all added before the clock. One client's jobs fed",
    "to its queue as the worker drains them (what its wait list lacks of twice the worker's concurrency, once that is",
    'at least the concurrency, as the dispatch loop hands jobs over; the rest of the outbox unchanged) measure what',
    'that hand-over alone costs.',
    '',
    table(
      ['figure', 'outbox', 'baseline'],
      [
        [
          'idle worker, Redis commands/s',
          `${fmt(idleMany, 1)} (${fmt(IDLE_ACCOUNTS)} accounts)`,
          `${fmt(idleOne, 1)} (1 account)`,
        ],
        ['enqueue (median round)', `${fmt(outboxMs)} ms`, `${fmt(bullMs)} ms (addBulk)`],
        ['drain', `${fmt(many)}/s (${fmt(ENQUEUE_ACCOUNTS)} accounts)`, `${fmt(single)}/s (1 account)`],
        [
          'Redis commands per send while draining (the counts poll included)',
          fmt(manyCommands, 1),
          fmt(singleCommands, 1),
        ],
        [
          "Redis CPU per send while draining (the server's user and system time)",
          `${fmt(manyCpu, 3)} ms`,
          `${fmt(singleCpu, 3)} ms`,
        ],
      ],
    ),
    '',
    `Fairness: the fake OA server (in this process) serving ${fairAccounts.length} accounts, each limited to ${QUOTA.max} requests per`,
    `${fmt(QUOTA.windowMs)} ms in a sliding window (the API's 200 a minute, raised so that the bench takes half a minute; a`,
    `quota slot is ${fmt(SLOT_MS)} ms), and 2 worker processes (\`outbox.work({ accounts })\`, concurrency 8 each, every`,
    "account's client limited to that quota and sharing it through Redis). Accounts camp-1 and camp-2 each",
    `queue a campaign of ${CAMPAIGN} \`bulk: true\` sends; from 3 s on, every 300 ms, one \`add\` of a small account's send`,
    `(${SMALL.length} small accounts, ${SMALL_SENDS} each) or of a campaign account's reply (${REPLIES} in all), in random order.`,
    "Quota use: each campaign account's requests (its login and replies included) until its campaign's last",
    'send (a reply added after it finds the account idle): a request can go no sooner than a window after',
    'the one a quota before it; the window over the mean of those lags, from the second window on. The',
    "limiter's own margin (1% of the window) makes 0.990 the most it can use. Wait: from the start of `add`",
    'to the fake receiving the send. Run twice: with `replyReserve: 0` (a campaign may take every slot, as',
    'before issue 52: the quota-use goal), then with the default 0.1 (a campaign leaves a tenth of each',
    "window to its account's replies: its own use, its sends alone, is reported; `bench/outbox-replies.bench.ts`",
    "measures the replies' wait).",
    '',
    table(
      ['figure', 'replyReserve 0', 'replyReserve 0.1', 'goal'],
      [
        ...CAMPAIGNS.map((account, i) => [
          `quota use, ${account} (its campaign's own)`,
          `${(fairToday.quotaUse[i] ?? 0).toFixed(3)} (${(fairToday.campaignUse[i] ?? 0).toFixed(3)})`,
          `${(fairReserved.quotaUse[i] ?? 0).toFixed(3)} (${(fairReserved.campaignUse[i] ?? 0).toFixed(3)})`,
          '>= 0.98 with 0; campaign >= 0.85 with 0.1',
        ]),
        ['429 answers (every account)', fmt(fairToday.rejected), fmt(fairReserved.rejected), '0'],
        [
          `small accounts' wait, median / p99 / max (${fairToday.smallWaits.length} sends)`,
          ...fairRuns.map(
            (r) =>
              `${fmt(median(r.smallWaits))} / ${fmt(percentile(r.smallWaits, 0.99))} / ${fmt(Math.max(...r.smallWaits))} ms`,
          ),
          `p99 <= ${fmt(waitGoalMs)} ms`,
        ],
        [
          `campaign accounts' replies' wait, median / p99 / max (${fairToday.replyWaits.length} replies)`,
          ...fairRuns.map(
            (r) =>
              `${fmt(median(r.replyWaits))} / ${fmt(percentile(r.replyWaits, 0.99))} / ${fmt(Math.max(...r.replyWaits))} ms`,
          ),
          '',
        ],
        [
          'sends delivered',
          ...fairRuns.map((r) => fmt(r.sent)),
          fmt(CAMPAIGNS.length * CAMPAIGN + SMALL.length * SMALL_SENDS + REPLIES),
        ],
      ],
    ),
    '',
    `At the API's quota, 10,000 accounts send ${fmt(fleetRate)} texts a second. At ${fmt(many)} sends a second per`,
    `worker process (this machine, the fake sharing its cores), that is about ${fmt(Math.ceil(fleetRate / many))} worker processes. Redis`,
    `spent ${fmt(manyCpu, 3)} ms of CPU per send (${fmt(manyCommands, 1)} commands as it counts them, each inside a script counted,`,
    "the progress poll included); each account's coordination adds a limiter slot taken and ended, about",
    `5 commands more: some ${fmt(redisMsPerSend, 3)} ms in all. A Redis master runs its commands on one core, so`,
    `${fmt(fleetRate)} sends a second keep about ${fmt(redisCores, 1)} such cores busy: ${fmt(masters)} masters, each kept under half`,
    "busy, on cores like this machine's (measure yours: a server's cores are often faster). One BullMQ",
    'queue lives on one master (its keys share one hash tag on a Cluster): the outbox keeps its accounts',
    "in `shards` queues (8 by default on a Cluster), so give it at least a few per master; each account's",
    'coordination keys are on the master of their own tag.',
  ].join('\n'),
});
