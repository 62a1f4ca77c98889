/**
 * Replies first (issue 52): how long a reply of an account waits while that account's own campaign
 * (`bulk: true`) runs at its quota, with the outbox's `replyReserve` (0.1, the default) beside today's
 * behaviour (`replyReserve: 0`), in the same run.
 *
 * A local redis-server, the fake OA server enforcing each account's quota in a sliding window, and 2
 * worker processes (`outbox.work({ accounts })`, every account's client limited to the quota and
 * sharing it through Redis). 4 accounts each run a campaign longer than the run; from 1 s on each adds
 * replies at random (exponential gaps, half the reserve's rate: 5% of the quota). Figures: the replies'
 * wait from `add` to the fake receiving the send (p50, p99, max), the campaign's own sends per window
 * over the quota (its use, the replies and logins not counted), and the 429 answers.
 *
 * Two quotas: 40 per 4 s (3 interleaved rounds, 32 s each, the order alternating), and the API's own
 * 200 a minute, run for real (one round each, 3 minutes: the first minute is the campaign's opening
 * burst of today's behaviour, then two of steady state).
 *
 *   npx tsx bench/outbox-replies.bench.ts            (about 9 minutes)
 *   npx tsx bench/outbox-replies.bench.ts --quick    (40 per 4 s only, one round: about 1 minute)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createOutbox } from '../src/queue/index.js';
import { createMockServer } from '../src/testing/index.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { fmt, median, percentile, report, table } from './support.js';

const QUICK = process.argv.includes('--quick');
const ACCOUNTS = ['camp-1', 'camp-2', 'camp-3', 'camp-4'];
/** Replies per account, as a share of the quota: half of the default reserve. */
const REPLY_SHARE = 0.05;
const RESERVES = [0, 0.1] as const;

interface Quota {
  max: number;
  windowMs: number;
}
interface Scenario {
  label: string;
  quota: Quota;
  runMs: number;
  rounds: number;
  /** The reply goal: p99 under this many ms (at most, with `orEqual`). */
  goalMs: number;
  orEqual: boolean;
}
const SCENARIOS: Scenario[] = [
  {
    label: '40 per 4 s',
    quota: { max: 40, windowMs: 4000 },
    runMs: 32_000,
    rounds: QUICK ? 1 : 3,
    goalMs: 500,
    orEqual: true,
  },
  ...(QUICK
    ? []
    : [
        {
          label: '200 a minute',
          quota: { max: 200, windowMs: 60_000 },
          runMs: 180_000,
          rounds: 1,
          goalMs: 1000,
          orEqual: false,
        },
      ]),
];

const redisServer = await startRedisServer();
const { url } = redisServer;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const workerScript = new URL('./outbox-worker.ts', import.meta.url).pathname;
const fakeAccounts = ACCOUNTS.map((username) => ({
  username,
  apiKey: `key-${username}`,
  apiSecret: `secret-${username}-abcdefgh`,
}));

interface Run {
  /** Each reply's wait, ms, from the start of its `add` to the fake receiving it. */
  waits: number[];
  /** The lowest of the accounts' campaign use (its own sends, per window over the quota). */
  campaignUse: number;
  rejected: number;
}

let runs = 0;
async function run(scenario: Scenario, replyReserve: number): Promise<Run> {
  const { quota, runMs } = scenario;
  const name = `replies-${runs++}`;
  const fake = await createMockServer({ accounts: fakeAccounts, rateLimit: { general: quota } });
  const outbox = createOutbox({ connection: { url }, name });
  // More than the run can send: the campaign is at its quota throughout.
  const campaign = Math.ceil(((quota.max * runMs) / quota.windowMs) * 1.2);
  await outbox.addMany(
    ACCOUNTS.flatMap((account) =>
      Array.from({ length: campaign }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `c${i}` },
        key: `c${i}`,
        account,
        bulk: true,
      })),
    ),
  );
  const config = JSON.stringify({
    redisUrl: url,
    baseUrl: fake.url,
    limit: quota,
    concurrency: 8,
    name,
    accounts: fakeAccounts,
    replyReserve,
  });
  const workers = await Promise.all(
    [1, 2].map(async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', workerScript, config], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      await once(child.stdout, 'data');
      return child;
    }),
  );
  const begun = Date.now();
  const added = new Map<string, number>();
  // Each account's replies: exponential gaps (a Poisson stream), from 1 s on until the run's end less
  // a window's quarter, so that the last ones go out before the workers stop.
  const meanGapMs = quota.windowMs / (quota.max * REPLY_SHARE);
  const lastAddAt = runMs - quota.windowMs / 4;
  await Promise.all(
    ACCOUNTS.map(async (account) => {
      let at = 1000 + Math.random() * meanGapMs;
      for (let i = 0; at < lastAddAt; i++) {
        await sleep(Math.max(0, begun + at - Date.now()));
        const key = `r${i}`;
        added.set(`${account}/${key}`, Date.now());
        await outbox.add('sendText', { user_id: 'u', msg: key }, { key, account });
        at += -Math.log(1 - Math.random()) * meanGapMs;
      }
    }),
  );
  await sleep(Math.max(0, begun + runMs - Date.now()));
  // Every reply delivered (bounded: a reply still queued counts as waiting until the end).
  const replies = () => fake.deliveries.filter((d) => String(d.items[0]?.msg).startsWith('r')).length;
  const stopBy = Date.now() + quota.windowMs * 2;
  while (replies() < added.size && Date.now() < stopBy) await sleep(100);
  const endedAt = Date.now();
  await Promise.all(
    workers.map(async (child) => {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }),
  );
  await outbox.close();
  const waits: number[] = [];
  const uses: number[] = [];
  for (const account of ACCOUNTS) {
    const { deliveries } = fake.account(account);
    const replyKeys = [...added.keys()].filter((k) => k.startsWith(`${account}/`));
    for (const full of replyKeys) {
      const key = full.slice(account.length + 1);
      const got = deliveries.find((d) => String(d.items[0]?.msg) === key);
      waits.push((got?.at ?? endedAt) - (added.get(full) ?? 0));
    }
    // The campaign's own use, from its second window on (the first opens with the quota full) to the
    // last reply added. A send of it goes no sooner than a window after the one a quota before it: the
    // window over the mean of those lags (a count over a span would credit a campaign that bursts
    // with two bursts in a span of less than two windows).
    const from = begun + quota.windowMs;
    const to = begun + lastAddAt;
    const at = deliveries
      .filter((d) => String(d.items[0]?.msg).startsWith('c') && d.at >= from && d.at < to)
      .map((d) => d.at);
    const lags = at.slice(quota.max).map((t, i) => t - (at[i] ?? 0));
    uses.push(quota.windowMs / (lags.reduce((sum, lag) => sum + lag, 0) / lags.length));
  }
  const rejected = fake.accounts.flatMap((a) => a.requests).filter((r) => r.status === 429).length;
  await fake.close();
  return { waits, campaignUse: Math.min(...uses), rejected };
}

interface Result {
  scenario: Scenario;
  reserve: number;
  rounds: Run[];
}
const results: Result[] = [];
for (const scenario of SCENARIOS) {
  const byReserve = new Map<number, Run[]>(RESERVES.map((r) => [r, []]));
  for (let round = 0; round < scenario.rounds; round++) {
    // The order alternates from round to round.
    const order = round % 2 === 0 ? RESERVES : [...RESERVES].reverse();
    for (const reserve of order) {
      const r = await run(scenario, reserve);
      byReserve.get(reserve)?.push(r);
      console.log(
        `${scenario.label}, replyReserve ${reserve}, round ${round + 1}: replies p50 ${fmt(median(r.waits))} / p99 ${fmt(
          percentile(r.waits, 0.99),
        )} ms (${r.waits.length}), campaign use ${r.campaignUse.toFixed(3)}, ${r.rejected} answers 429`,
      );
    }
  }
  for (const reserve of RESERVES) results.push({ scenario, reserve, rounds: byReserve.get(reserve) ?? [] });
}
await redisServer.stop();

/** The replies of every round pooled (p50, p99, max); the campaign use of the median round. */
const figures = ({ rounds }: Result) => {
  const waits = rounds.flatMap((r) => r.waits);
  return {
    waits,
    p50: median(waits),
    p99: percentile(waits, 0.99),
    max: Math.max(...waits),
    use: median(rounds.map((r) => r.campaignUse)),
    rejected: rounds.reduce((n, r) => n + r.rejected, 0),
  };
};
const rows = SCENARIOS.flatMap((scenario) => {
  const today = figures(results.find((r) => r.scenario === scenario && r.reserve === 0) as Result);
  const reserved = figures(results.find((r) => r.scenario === scenario && r.reserve === 0.1) as Result);
  return [
    {
      figure: `outbox replies first, a reply's wait while its account's campaign runs at ${scenario.label}, p99 (replyReserve 0.1 against 0)`,
      sdk: `${fmt(reserved.p99)} ms`,
      baseline: `${fmt(today.p99)} ms`,
      ratio: (reserved.p99 / today.p99).toFixed(3),
      goal: `${scenario.orEqual ? '<=' : '<'} ${fmt(scenario.goalMs)} ms, 0 answers 429`,
      pass:
        (scenario.orEqual ? reserved.p99 <= scenario.goalMs : reserved.p99 < scenario.goalMs) &&
        reserved.rejected === 0,
    },
    {
      figure: `outbox replies first, the campaign's own quota use at ${scenario.label} (replyReserve 0.1 against 0)`,
      sdk: reserved.use.toFixed(3),
      baseline: today.use.toFixed(3),
      ratio: (reserved.use / today.use).toFixed(3),
      goal: '>= 0.85, 0 answers 429',
      pass: reserved.use >= 0.85 && reserved.rejected === 0,
    },
  ];
});
report({
  title: 'Outbox: replies first',
  command: 'npx tsx bench/outbox-replies.bench.ts',
  rows,
  details: [
    `A local redis-server, the fake OA server (in this process) enforcing each account's quota in a sliding`,
    `window, and 2 worker processes (\`outbox.work({ accounts })\`, concurrency 8 each, every account's client`,
    `limited to the quota and sharing it through Redis). ${ACCOUNTS.length} accounts each run a campaign of \`bulk: true\``,
    'sends, more than the run can send; from 1 s on each account adds replies at random (exponential gaps,',
    `${REPLY_SHARE * 100}% of the quota: half the default reserve) until a quarter window before the run's end. A reply's wait:`,
    "from the start of `add` to the fake receiving it. The campaign's use: its own sends (replies and logins",
    "not counted) from the second window on (the first opens full) to the last reply's `add`: a send goes no",
    'sooner than a window after the one a quota before it; the window over the mean of those lags, the lowest',
    "of the accounts (the limiter's 1% margin makes 0.99 the most). `replyReserve: 0` is the outbox before",
    'this change (bulk sends only queue behind replies); 0.1 is the default. Rounds interleaved (the order',
    "alternating); the replies of every round pooled, the median round's campaign use.",
    '',
    table(
      [
        'quota',
        'replyReserve',
        'rounds',
        'replies',
        'reply wait p50 / p99 / max',
        'campaign use (each round)',
        '429 answers',
      ],
      results.map((result) => {
        const f = figures(result);
        return [
          result.scenario.label,
          String(result.reserve),
          `${result.rounds.length} x ${fmt(result.scenario.runMs / 1000)} s`,
          fmt(f.waits.length),
          `${fmt(f.p50)} / ${fmt(f.p99)} / ${fmt(f.max)} ms`,
          `${f.use.toFixed(3)} (${result.rounds.map((r) => r.campaignUse.toFixed(3)).join(', ')})`,
          fmt(f.rejected),
        ];
      }),
    ),
  ].join('\n'),
});
