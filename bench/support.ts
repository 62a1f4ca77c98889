/**
 * What the benchmarks share: the figures each one reports to `bench/run.ts`, the statistics, the
 * token pair their local servers hand out, and the load the webhook benches put on their receivers.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The empty tsconfig Bun runs the built package with (`--tsconfig-override`), the one the runtime tests
 * use: Bun would apply the repository tsconfig's `paths` (`oa-messaging` to src) to the built files too,
 * and resolve their runtime imports (`#core-runtime` ...) to the Node sources instead of the package's
 * own `imports` entries for Bun.
 */
export const BUN_TSCONFIG = fileURLToPath(new URL('../test/runtimes/empty-tsconfig.json', import.meta.url));

/** One line of the summary table in BENCHMARKS.md. */
export interface SummaryRow {
  /** What is measured, e.g. "`sendText` per-call time, median". */
  figure: string;
  /** The SDK's figure, with its unit. */
  sdk: string;
  /** The figure it is set against, measured in the same run, with its unit. */
  baseline: string;
  /** The SDK's figure over the baseline's (or the figure itself when it has no baseline). */
  ratio: string;
  /** The goal, when there is one, e.g. "<= 1.3". */
  goal?: string;
  /** Whether the goal was met. */
  pass?: boolean;
}

/** What one benchmark reports: the summary rows, and its own section of BENCHMARKS.md. */
export interface BenchReport {
  title: string;
  /** The command that runs this benchmark alone. */
  command: string;
  rows: SummaryRow[];
  /** Markdown: what is measured and how, then the full figures. */
  details: string;
}

/**
 * Prints the report and, under `npm run bench`, hands it to `bench/run.ts` (through the file named by
 * `OA_BENCH_REPORT`). Sets a failing exit code when a goal was missed.
 */
export function report(result: BenchReport): void {
  console.log(`\n${result.details}\n`);
  for (const row of result.rows) {
    const goal = row.goal ? `, goal ${row.goal}: ${row.pass ? 'met' : 'MISSED'}` : '';
    console.log(`${row.figure}: SDK ${row.sdk}, baseline ${row.baseline}, ratio ${row.ratio}${goal}`);
  }
  const out = process.env.OA_BENCH_REPORT;
  if (out) writeFileSync(out, JSON.stringify(result));
  if (result.rows.some((row) => row.pass === false)) process.exitCode = 1;
}

export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** The value below which `p` (0..1) of the sorted values lie. */
export const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
};

export const fmt = (value: number, digits = 0): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A markdown table from a header row and body rows. */
export function table(head: readonly string[], rows: readonly (readonly string[])[], align?: string): string {
  const rule = align ?? head.map(() => '---').join('|');
  return [`| ${head.join(' | ')} |`, `|${rule}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

/** An access token the SDK accepts (a JWT whose `exp` is an hour away) and the pair around it. */
export function tokenPair() {
  const iat = Math.floor(Date.now() / 1000);
  const jwt = (claims: object) =>
    ['{"alg":"HS256","typ":"JWT"}', JSON.stringify(claims), 'sig']
      .map((part) => Buffer.from(part).toString('base64url'))
      .join('.');
  return {
    access_token: jwt({ iat, exp: iat + 3600 }),
    refresh_token: 'refresh-token-bench',
    token_type: 'Bearer',
    expires_in: '1h',
  };
}

/**
 * A server that answers every request at once, in the process that runs it: a token pair for
 * `/auth/token`, `success` for anything else. It prints its port and ends when its stdin closes.
 */
export function serveInstantApi(): void {
  const pair = JSON.stringify({ data: tokenPair() });
  const success = JSON.stringify({ data: 'success' });
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = req.url?.endsWith('/auth/token') ? pair : success;
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  process.stdin.on('end', () => process.exit(0)).resume();
}

/**
 * The bench file `self` again, in its `server` role ({@link serveInstantApi}), and that server's base
 * URL. Ending the child's stdin closes it.
 */
export async function spawnInstantApi(self: string): Promise<{ server: ChildProcess; baseUrl: string }> {
  const server = spawn(process.execPath, ['--import', 'tsx', self, 'server'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return { server, baseUrl: `http://127.0.0.1:${(await firstLine(server)).trim()}` };
}

/** The first line a child process prints: its port, or its result. */
export function firstLine(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const end = out.indexOf('\n');
      if (end >= 0) resolve(out.slice(0, end));
    });
    child.on('exit', (code) => reject(new Error(`child exited with ${code} before answering`)));
  });
}

/**
 * The fake OA server in a process of its own, enforcing `general` in a sliding window. Ending its
 * stdin closes it; with `reportAtEnd`, it first prints one JSON line: when each delivery arrived
 * (`sent`, ms since the epoch) and how many requests it answered 429 (`rejected`).
 */
export async function spawnFakeServer(
  general: { max: number; windowMs: number },
  reportAtEnd = false,
): Promise<{
  server: ChildProcess & { stdin: NodeJS.WritableStream; stdout: NodeJS.ReadableStream };
  url: string;
}> {
  const atEnd = reportAtEnd
    ? `console.log(JSON.stringify({ sent: mock.deliveries.map((d) => d.at), rejected: mock.requests.filter((r) => r.status === 429).length }));`
    : '';
  const server = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      `import { createMockServer } from ${JSON.stringify(new URL('../src/testing/index.ts', import.meta.url).href)};
       const mock = await createMockServer({ rateLimit: { general: ${JSON.stringify(general)}, mode: 'sliding' } });
       console.log(mock.url);
       process.stdin.on('end', async () => { ${atEnd} await mock.close(); }).resume();`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [line] = (await once(server.stdout, 'data')) as [Buffer];
  return { server, url: line.toString().trim() };
}

/**
 * A redis-server of its own (`REDIS_SERVER`, else the one on PATH) on a free loopback port, no
 * persistence, its files in a new temp dir (the caller removes `dir`); resolves once it is ready.
 */
export async function spawnRedisServer(): Promise<{ redis: ChildProcess; url: string; dir: string }> {
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'oa-bench-redis-'));
  const redis = spawn(
    process.env.REDIS_SERVER ?? 'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  for await (const chunk of redis.stdout) if (String(chunk).includes('Ready to accept connections')) break;
  redis.stdout.resume();
  return { redis, url: `redis://127.0.0.1:${port}`, dir };
}

/**
 * The load of the webhook benches: `connections` kept busy for `seconds` a round, `rounds` rounds
 * interleaved between the receivers (the median of their ratios is the figure: more rounds, less of
 * the machine's noise in it).
 */
export const WEBHOOK_LOAD = { seconds: 3, rounds: 7, connections: 50 } as const;

/** A 1 KB image event as the OA service posts it; autocannon puts a fresh id in each `[<id>]`. */
export function imageEvent(): string {
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

/** What one autocannon run measured: mean requests/s, latency in ms, and the answers that were not 2xx or failed. */
export interface Load {
  rps: number;
  p50: number;
  p99: number;
  bad: number;
}

const autocannonCli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');

/**
 * One autocannon run against `url`, in a Node process of its own (so that the load generator does not
 * share an event loop with the benchmark or a receiver): `connections` kept busy for `seconds`, each
 * request a POST of `body` as JSON.
 */
export async function load(
  url: string,
  { seconds, connections, body }: { seconds: number; connections: number; body: string },
): Promise<Load> {
  const args = [autocannonCli, '-c', String(connections), '-d', String(seconds), '-m', 'POST'];
  args.push('-H', 'content-type=application/json', '-b', body, '-I', '-j', url);
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
