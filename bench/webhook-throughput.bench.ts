/**
 * Requests per second a webhook receiver sustains under load: the SDK's node handler on node:http and
 * its fetch handler on @hono/node-server (parsing, validation and in-memory dedupe on), each beside a
 * raw receiver of the same runtime that only reads the body, `JSON.parse`s it and answers 200 with the
 * same headers and body. Receivers run in processes of their own (bench/webhook-server.ts), and so does
 * the load generator (autocannon, 50 connections, 1 KB image events, each with its own MsgKey).
 *
 *   npx tsx bench/webhook-throughput.bench.ts
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { firstLine, fmt, median, report, type SummaryRow, table } from './support.js';

const SECONDS = 3;
const ROUNDS = 5;
const CONNECTIONS = 50;
const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
const serverScript = fileURLToPath(new URL('./webhook-server.ts', import.meta.url));

// The receivers load the built package, as an application does.
execFileSync('npm', ['run', '--silent', 'build'], {
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  stdio: 'ignore',
});

/** A 1 KB image event as the OA service posts it; autocannon puts a fresh id in each `[<id>]`. */
function imageEvent(): string {
  const url = (size: number) =>
    `https://im-media.example.com/3200490432214177468_144115198371610486_D61040894AC3DE44CDFFFB3EC7EB720F/${size}?sign=[<id>]`;
  return JSON.stringify({
    event_type: 'message',
    username: 'demo_shop',
    timestamp: '2026-05-10T09:38:46.000Z',
    data: {
      CallbackCommand: 'C2C.CallbackAfterSendMsg',
      From_Account: 'customer_1001',
      To_Account: 'demo_shop',
      MsgSeq: 48374,
      MsgRandom: 2837546,
      MsgTime: 1778405926,
      MsgKey: '[<id>]',
      SendMsgResult: 0,
      UnreadMsgNum: 1,
      EventTime: 1778405926123,
      MsgBody: [
        {
          MsgType: 'TIMImageElem',
          MsgContent: {
            UUID: '1853095_D61040894AC3DE44CDFFFB3EC7EB720F',
            ImageFormat: 1,
            ImageInfoArray: [
              { Type: 1, Size: 1853095, Width: 2448, Height: 3264, URL: url(0) },
              { Type: 2, Size: 256524, Width: 720, Height: 960, URL: url(720) },
              { Type: 3, Size: 12535, Width: 198, Height: 264, URL: url(198) },
            ],
          },
        },
      ],
      CloudCustomData: '{"campaign":"spring-sale","source":"chat","note":"padding to a realistic size"}',
    },
  });
}
const BODY = imageEvent();

interface Load {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
}

/** One autocannon run against `url`, in its own process. */
async function load(url: string, seconds: number): Promise<Load> {
  const args = [autocannonCli, '-c', String(CONNECTIONS), '-d', String(seconds), '-m', 'POST'];
  args.push('-H', 'content-type=application/json', '-b', BODY, '-I', '-j', url);
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 1 << 24 });
  const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
    errors: number;
  };
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    bad: result.non2xx + result.errors,
  };
}

const receivers = [
  { kind: 'raw-node', name: 'raw node:http: read, `JSON.parse`, 200 (baseline)' },
  { kind: 'sdk-node', name: 'SDK `createWebhookHandler` on node:http' },
  { kind: 'raw-fetch', name: 'raw fetch handler on @hono/node-server: `req.json()`, 200 (baseline)' },
  { kind: 'sdk-fetch', name: 'SDK `createFetchWebhookHandler` on @hono/node-server' },
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
  for (const url of urls) await load(url, 1);
  const samples = receivers.map((): Load[] => []);
  // Rounds interleave the receivers, so a burst of load elsewhere on the machine does not land on one only.
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, url] of urls.entries()) samples[index]!.push(await load(url, SECONDS));
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
  report({
    title: 'Webhook throughput',
    command: 'npx tsx bench/webhook-throughput.bench.ts',
    rows,
    details: [
      `Each receiver runs in its own Node process; autocannon, in another, keeps ${CONNECTIONS} connections busy`,
      `posting a ${fmt(Buffer.byteLength(BODY))}-byte image event (\`TIMImageElem\` with three renditions), each`,
      'request with its own `MsgKey`, so that dedupe lets every one through. The SDK handlers parse,',
      'validate and deduplicate (in-memory store) each event and call an `onEvent` that counts it; the raw',
      'receivers read the body, `JSON.parse` it and answer the same 200, headers and body. Median of',
      `${ROUNDS} interleaved rounds of ${SECONDS} s each after a 1 s warm-up per receiver (ratios: median of`,
      "each round's ratio). Latency is autocannon's, in ms (1 ms resolution; a ratio counts 0 ms as 1).",
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
