/**
 * An outbox campaign drained by 3 worker processes: 10,000 queued sends (`oa-messaging/queue`, a local
 * redis-server) against the fake OA server in its own process, enforcing a scaled-down quota in a
 * sliding window. Reports the rate achieved after the first burst over the allowed rate, and the 429s.
 * Needs redis-server on PATH (or REDIS_SERVER).
 *
 *   npx tsx bench/outbox.bench.ts
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createOutbox, type OutboxEntry } from '../src/queue/index.js';
import { startRedisServer } from '../test/redis/redis-server.js';
import { fmt, report, spawnFakeServer, table } from './support.js';

const LIMIT = { max: 1250, windowMs: 10_000 };
const SENDS = 10_000;
const WORKERS = 3;
const CONCURRENCY = 32;
const GOAL_UTILISATION = 0.98;

const children: ChildProcess[] = [];
const stopAll = () => {
  for (const child of children) child.kill('SIGKILL');
};
process.on('exit', stopAll);

const redisServer = await startRedisServer();
const redisUrl = redisServer.url;

// The fake in its own process; at the end it reports when each send arrived and the 429s.
const { server, url: baseUrl } = await spawnFakeServer(LIMIT, true);
children.push(server);

const outbox = createOutbox({ connection: { url: redisUrl }, name: 'bench' });
function* campaign(): Generator<OutboxEntry> {
  for (let i = 0; i < SENDS; i++) {
    yield { method: 'sendText', params: { user_id: `user-${i}`, msg: `message ${i}` }, key: `bench-${i}` };
  }
}
await outbox.addMany(campaign());

const config = JSON.stringify({ redisUrl, baseUrl, limit: LIMIT, concurrency: CONCURRENCY });
const workerScript = new URL('./outbox-worker.ts', import.meta.url).pathname;
await Promise.all(
  Array.from({ length: WORKERS }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', workerScript, config], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await once(child.stdout, 'data');
  }),
);
const started = performance.now();
for (;;) {
  const counts = await outbox.counts();
  if (counts.delivered + counts.failed + counts.unknown === SENDS) break;
  if (performance.now() - started > 300_000) throw new Error(`not drained: ${JSON.stringify(counts)}`);
  await new Promise((resolve) => setTimeout(resolve, 500));
}
const counts = await outbox.counts();
await outbox.close();

let output = '';
server.stdout.on('data', (chunk: Buffer) => {
  output += chunk.toString();
});
server.stdin.end();
await once(server, 'exit');
stopAll();
await redisServer.stop();
const { sent, rejected } = JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as {
  sent: number[];
  rejected: number;
};
sent.sort((a, b) => a - b);

const first = sent[0] ?? 0;
const last = sent.at(-1) ?? 0;
const allowedPerMs = LIMIT.max / LIMIT.windowMs;
// Steady state: the sends after the first window (whose burst the workers fill as fast as they can
// fetch jobs) over the time from that window's end to the last send, against the allowed rate.
const steadyFrom = first + LIMIT.windowMs;
const achievedPerMs = sent.filter((t) => t > steadyFrom).length / (last - steadyFrom);
const utilisation = achievedPerMs / allowedPerMs;
// The whole run, first burst included: what a sliding window allows over the span is `max` at once,
// then `max` per window.
const overall = sent.length / (LIMIT.max * ((last - first) / LIMIT.windowMs + 1));
const ok = utilisation >= GOAL_UTILISATION && rejected === 0 && counts.delivered === SENDS;

report({
  title: 'Outbox: a campaign drained by 3 worker processes',
  command: 'npx tsx bench/outbox.bench.ts',
  rows: [
    {
      figure: `outbox utilisation, ${fmt(SENDS)} queued sends, ${WORKERS} worker processes (429 answers)`,
      sdk: `${(achievedPerMs * 1000).toFixed(1)}/s (${rejected})`,
      baseline: `${(allowedPerMs * 1000).toFixed(1)}/s allowed`,
      ratio: utilisation.toFixed(3),
      goal: `>= ${GOAL_UTILISATION} with zero 429s`,
      pass: ok,
    },
  ],
  details: [
    `${fmt(SENDS)} texts queued with \`outbox.addMany\` in a local redis-server, then drained by ${WORKERS} worker`,
    `processes (\`outbox.work\`, concurrency ${CONCURRENCY} each) whose clients share the token and the quota through`,
    '`createRedisCoordination`. The fake OA server runs in its own process and enforces',
    `${LIMIT.max} requests per ${fmt(LIMIT.windowMs)} ms in a sliding window (the spec's 200 a minute, scaled up so that a`,
    'run takes under two minutes; the margin is 1% of the window). Utilisation is the steady rate: the',
    "sends after the first window over the time from that window's end to the last send (as the fake",
    'logged them), over the allowed rate. "Overall" counts the whole run against what the window allows',
    'over it, the first burst included: the workers fill that burst only as fast as they fetch jobs.',
    'Every send also writes its may-have-left record in Redis before it leaves.',
    '',
    table(
      [
        'limit',
        'sends',
        'span',
        'achieved rate',
        'allowed rate',
        'utilisation',
        'overall',
        '429 answers',
        'final counts',
      ],
      [
        [
          `${LIMIT.max} per ${fmt(LIMIT.windowMs)} ms`,
          fmt(sent.length),
          `${fmt(last - first)} ms`,
          `${(achievedPerMs * 1000).toFixed(1)}/s`,
          `${(allowedPerMs * 1000).toFixed(1)}/s`,
          utilisation.toFixed(3),
          overall.toFixed(3),
          String(rejected),
          `delivered ${counts.delivered}, failed ${counts.failed}, unknown ${counts.unknown}`,
        ],
      ],
      '---|---:|---:|---:|---:|---:|---:|---:|---',
    ),
  ].join('\n'),
});
