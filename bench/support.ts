/**
 * What the benchmarks share: the figures each one reports to `bench/run.ts`, the statistics, the
 * token pair their local servers hand out, and the load the webhook benches put on their receivers.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
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
 * (`sent`, ms since the epoch) and how many requests it answered 429 (`rejected`). With `accounts`, it
 * serves that many accounts instead of its default one: `acct-<i>`, api key `key-<i>`, secret
 * `secret-<i>-abcdefgh`.
 */
export async function spawnFakeServer(
  general: { max: number; windowMs: number },
  reportAtEnd = false,
  accounts = 0,
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
       const mock = await createMockServer({
         rateLimit: { general: ${JSON.stringify(general)}, mode: 'sliding' },
         ${accounts > 0 ? `accounts: Array.from({ length: ${accounts} }, (_, i) => ({ username: 'acct-' + i, apiKey: 'key-' + i, apiSecret: 'secret-' + i + '-abcdefgh' })),` : ''}
       });
       console.log(mock.url);
       process.stdin.on('end', async () => { ${atEnd} await mock.close(); }).resume();`,
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const [line] = (await once(server.stdout, 'data')) as [Buffer];
  return { server, url: line.toString().trim() };
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

/**
 * Holds each process of `pids` to `cores` of a CPU (a cgroup of its own with a CPU quota, as a host of
 * that size would): what lets one machine show how a load spreads over Redis processes that each have
 * a budget of their own. Needs a writable cgroup CPU controller (v2 at /sys/fs/cgroup, or v1's `cpu`),
 * as root has on most Linux machines; else resolves with why not. `release()` lifts the budgets.
 */
export function cpuBudget(
  pids: readonly number[],
  cores: number,
): { release(): void } | { unavailable: string } {
  const PERIOD_US = 100_000;
  const quota = Math.max(1000, Math.round(cores * PERIOD_US));
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/cpu';
  const made: string[] = [];
  const release = () => {
    for (const dir of made) {
      // Back to the root group, then the empty group removed.
      try {
        for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
          writeFileSync(join(root, 'cgroup.procs'), pid);
        rmdirSync(dir);
      } catch {}
    }
  };
  try {
    if (v2 && !readFileSync(join(root, 'cgroup.subtree_control'), 'utf8').includes('cpu'))
      writeFileSync(join(root, 'cgroup.subtree_control'), '+cpu');
    for (const pid of pids) {
      const dir = join(root, `oa-bench-${pid}`);
      mkdirSync(dir);
      made.push(dir);
      if (v2) writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
      else {
        writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
        writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota));
      }
      writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    }
    return { release };
  } catch (error) {
    release();
    return { unavailable: `no CPU budget per process here (${(error as Error).message})` };
  }
}
