/**
 * Requests per second a webhook receiver sustains under load: the SDK's node handler on node:http and
 * its fetch handler on @hono/node-server (parsing, validation and in-memory dedupe on), each beside a
 * raw receiver of the same runtime that only reads the body, `JSON.parse`s it and answers 200 with the
 * same headers and body. Receivers run in processes of their own (bench/webhook-server.ts) on the built
 * package, as an application does (the bench builds it first), and so does the load generator
 * (autocannon, 50 connections, 1 KB image events, each with its own MsgKey). Beside them, on each of the
 * two servers, the event parsed and deduplicated by hand with the SDK's parser and store, with no handler
 * around them: the most a handler with this parser and store can reach (no goal).
 *
 *   npx tsx bench/webhook-throughput.bench.ts
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  firstLine,
  fmt,
  imageEvent,
  type Load,
  load,
  median,
  report,
  type SummaryRow,
  table,
  WEBHOOK_LOAD,
} from './support.js';

const { seconds: SECONDS, rounds: ROUNDS, connections: CONNECTIONS } = WEBHOOK_LOAD;
const serverScript = fileURLToPath(new URL('./webhook-server.ts', import.meta.url));

// The receivers load the built package, as an application does.
execFileSync('npm', ['run', '--silent', 'build'], {
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  stdio: 'ignore',
});

const BODY = imageEvent();
/** Posts image events to `url` from every connection for `seconds`. */
const post = (url: string, seconds: number) => load(url, { seconds, connections: CONNECTIONS, body: BODY });

const receivers = [
  { kind: 'raw-node', name: 'raw node:http: read, `JSON.parse`, 200 (baseline)' },
  { kind: 'sdk-node', name: 'SDK `createWebhookHandler` on node:http' },
  { kind: 'raw-fetch', name: 'raw fetch handler on @hono/node-server: `req.json()`, 200 (baseline)' },
  { kind: 'sdk-fetch', name: 'SDK `createFetchWebhookHandler` on @hono/node-server' },
  { kind: 'by-hand-node', name: 'by hand on node:http: read, `parseWebhookEvent`, dedupe, 200' },
  {
    kind: 'by-hand-fetch',
    name: 'by hand on @hono/node-server: `arrayBuffer()`, `parseWebhookEvent`, dedupe, 200',
  },
] as const;

const servers: ChildProcess[] = [];
try {
  const urls: string[] = [];
  for (const receiver of receivers) {
    const child = spawn(process.execPath, ['--import', 'tsx', serverScript, receiver.kind], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    servers.push(child);
    urls.push((await firstLine(child)).trim());
  }
  // Warm-up: each receiver's JIT, and the load generator's.
  for (const url of urls) await post(url, 1);
  const samples = receivers.map((): Load[] => []);
  // Rounds interleave the receivers, so a burst of load elsewhere on the machine does not land on one only.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, url] of urls.entries()) samples[index]!.push(await post(url, SECONDS));
  }
  const results = samples.map((runs) => ({
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
    bad: runs.reduce((total, run) => total + run.bad, 0),
  }));
  const bad = results.find((result) => result.bad > 0);
  if (bad) throw new Error(`a receiver answered ${bad.bad} requests with an error`);
  // The ratio of each round, then their median: both sides of a ratio saw the same moment's load.
  const ratio = (sdk: number, raw: number, of: (run: Load) => number) =>
    median(samples[sdk]!.map((run, round) => of(run) / of(samples[raw]![round]!)));
  const rows: SummaryRow[] = [];
  for (const [sdk, raw, label] of [
    [1, 0, 'node handler'],
    [3, 2, 'fetch handler (@hono/node-server)'],
  ] as const) {
    const rpsRatio = ratio(sdk, raw, (run) => run.rps);
    rows.push({
      figure: `webhook ${label}, requests/s (autocannon, ${CONNECTIONS} connections, 1 KB image event)`,
      sdk: `${fmt(results[sdk]!.rps)}/s`,
      baseline: `${fmt(results[raw]!.rps)}/s (raw ${sdk === 1 ? 'node:http' : 'fetch handler'})`,
      ratio: `${rpsRatio.toFixed(2)}x`,
      goal: '>= 0.8',
      pass: rpsRatio >= 0.8,
    });
    if (sdk === 1) {
      const p99Ratio = ratio(sdk, raw, (run) => Math.max(run.p99, 1));
      rows.push({
        figure: 'webhook node handler, p99 latency under that load',
        sdk: `${results[sdk]!.p99} ms`,
        baseline: `${results[raw]!.p99} ms (raw node:http)`,
        ratio: `${p99Ratio.toFixed(2)}x`,
        goal: '<= 1.5',
        pass: p99Ratio <= 1.5,
      });
    }
  }
  // No goal: what parsing and deduplication alone leave of the raw receiver's rate, the most a handler
  // with this parser and this store can reach before checking, answering errors or anything else.
  for (const [hand, raw, label] of [
    [4, 0, 'node:http'],
    [5, 2, '@hono/node-server'],
  ] as const) {
    rows.push({
      figure: `webhook event parsed and deduplicated by hand on ${label} (no handler), requests/s`,
      sdk: `${fmt(results[hand]!.rps)}/s`,
      baseline: `${fmt(results[raw]!.rps)}/s (raw ${raw === 0 ? 'node:http' : 'fetch handler'})`,
      ratio: `${ratio(hand, raw, (run) => run.rps).toFixed(2)}x`,
    });
  }
  report({
    title: 'Webhook throughput',
    command: 'npx tsx bench/webhook-throughput.bench.ts',
    rows,
    details: [
      `Each receiver runs in its own Node process, the SDK's on the built package; autocannon, in another, keeps ${CONNECTIONS} connections busy`,
      `posting a ${fmt(Buffer.byteLength(BODY))}-byte image event (\`TIMImageElem\` with three renditions), each`,
      'request with its own `MsgKey`, so that dedupe lets every one through. The SDK handlers parse,',
      'validate and deduplicate (in-memory store) each event and call an `onEvent` that counts it; the raw',
      'receivers read the body, `JSON.parse` it and answer the same 200, headers and body. Median of',
      `${ROUNDS} interleaved rounds of ${SECONDS} s each after a 1 s warm-up per receiver (ratios: median of`,
      "each round's ratio). Latency is autocannon's, in ms (1 ms resolution; a ratio counts 0 ms as 1).",
      'The by-hand receivers do only the two costs the handlers cannot shed: `parseWebhookEvent` on the',
      'bytes read, then a claim and a complete in a `MemoryDedupeStore` under the same key the handlers',
      'use, and the same 200; no method, size, encoding or error handling.',
      '',
      table(
        ['receiver', 'requests/s', 'p50', 'p99'],
        receivers.map((receiver, index) => [
          receiver.name,
          fmt(results[index]!.rps),
          `${results[index]!.p50} ms`,
          `${results[index]!.p99} ms`,
        ]),
        '---|---:|---:|---:',
      ),
    ].join('\n'),
  });
} finally {
  for (const server of servers) server.stdin?.end();
}
