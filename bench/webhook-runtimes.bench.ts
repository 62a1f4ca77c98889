/**
 * Requests per second the SDK's fetch webhook handler sustains on Bun's and Deno's own HTTP servers
 * (`Bun.serve`, `Deno.serve`; parsing, validation and in-memory dedupe on), each beside a raw receiver
 * on the same server that only reads the body with `request.json()` and answers 200 with the same
 * headers and body. The built package (`npm run build` first) runs in the runtime, each receiver in a
 * process of its own (bench/webhook-runtime-server.mjs), and so does the load generator (autocannon,
 * 50 connections, 1 KB image events, each with its own MsgKey). A runtime whose binary is missing (npm
 * packages bun and deno) is left out, with a note.
 *
 *   npx tsx bench/webhook-runtimes.bench.ts
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BUN_TSCONFIG,
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
const GOAL = 0.8;
/** The longest a receiver may take to close once its stdin has ended. */
const STOP_LIMIT_MS = 10_000;
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('./webhook-runtime-server.mjs', import.meta.url));

// The receivers load the built package, as an application does.
execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'ignore' });

const RUNTIMES = [
  {
    name: 'Bun',
    server: 'Bun.serve',
    bin: 'bun',
    args: ['run', `--tsconfig-override=${BUN_TSCONFIG}`, SCRIPT],
  },
  {
    name: 'Deno',
    server: 'Deno.serve',
    bin: 'deno',
    // A receiver needs only to listen on loopback. `manual`: Deno uses node_modules as it stands and
    // never installs into it.
    args: ['run', '--allow-net=127.0.0.1', '--node-modules-dir=manual', SCRIPT],
  },
] as const;

const RECEIVERS = [
  {
    kind: 'raw',
    name: (server: string) => `raw fetch handler on ${server}: \`request.json()\`, 200 (baseline)`,
  },
  { kind: 'sdk', name: (server: string) => `SDK \`createFetchWebhookHandler\` on ${server}` },
] as const;

const BODY = imageEvent();

/** Posts image events to a receiver from every connection for `seconds`; any answer but a 2xx fails the bench. */
async function post(receiver: string, url: string, seconds: number): Promise<Load> {
  const result = await load(url, { seconds, connections: CONNECTIONS, body: BODY });
  if (result.bad > 0) throw new Error(`${receiver} answered ${result.bad} requests with an error`);
  return result;
}

/**
 * Ends the receiver's stdin and resolves with its exit code (1 when it saw no event), or the signal that
 * ended it when it did not close in time.
 */
async function stop(child: ChildProcess): Promise<number | NodeJS.Signals | null> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin?.end();
    const timer = setTimeout(() => child.kill(), STOP_LIMIT_MS);
    await exited;
    clearTimeout(timer);
  }
  return child.exitCode ?? child.signalCode;
}

/** Both receivers in one runtime: a warm-up, then the interleaved rounds; each receiver's runs. */
async function measure(runtime: (typeof RUNTIMES)[number], bin: string): Promise<Load[][]> {
  const names = RECEIVERS.map((receiver) => `${runtime.name} ${receiver.kind} receiver`);
  const children: ChildProcess[] = [];
  const samples = RECEIVERS.map((): Load[] => []);
  try {
    const urls: string[] = [];
    for (const receiver of RECEIVERS) {
      const child = spawn(bin, [...runtime.args, receiver.kind], {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'inherit'],
        env: { ...process.env, NO_COLOR: '1' },
      });
      children.push(child);
      urls.push((await firstLine(child)).trim());
    }
    // Warm-up: each receiver's JIT, and the load generator's.
    for (const [index, url] of urls.entries()) await post(names[index]!, url, 1);
    // Rounds interleave the receivers, so a burst of load elsewhere on the machine does not land on one
    // only; the order flips each round, so neither always runs first.
    for (let round = 0; round < ROUNDS; round++) {
      const order = [...urls.keys()];
      if (round % 2 === 1) order.reverse();
      for (const index of order) samples[index]!.push(await post(names[index]!, urls[index]!, SECONDS));
    }
  } catch (error) {
    await Promise.all(children.map(stop));
    throw error;
  }
  const codes = await Promise.all(children.map(stop));
  for (const [index, code] of codes.entries()) {
    if (code !== 0) throw new Error(`${names[index]} exited with ${code} (1: it saw no event)`);
  }
  return samples;
}

const rows: SummaryRow[] = [];
const lines: string[][] = [];
const notes: string[] = [];
for (const runtime of RUNTIMES) {
  const bin = join(ROOT, 'node_modules', '.bin', runtime.bin);
  if (!existsSync(bin)) {
    notes.push(`${runtime.name}: not measured, ${runtime.bin} is not installed (npm ci installs it).`);
    continue;
  }
  const version = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 }).stdout.split('\n')[0];
  const samples = await measure(runtime, bin);
  const results = samples.map((runs) => ({
    rps: median(runs.map((run) => run.rps)),
    p50: median(runs.map((run) => run.p50)),
    p99: median(runs.map((run) => run.p99)),
  }));
  const [raw, sdk] = [0, 1] as const;
  // The ratio of each round, then their median: both sides of a ratio saw the same moment's load.
  const ratio = median(samples[sdk]!.map((run, round) => run.rps / samples[raw]![round]!.rps));
  rows.push({
    figure: `webhook fetch handler on ${runtime.server}, requests/s (autocannon, ${CONNECTIONS} connections, 1 KB image event)`,
    sdk: `${fmt(results[sdk]!.rps)}/s`,
    baseline: `${fmt(results[raw]!.rps)}/s (raw fetch handler on ${runtime.server})`,
    ratio: `${ratio.toFixed(2)}x`,
    goal: `>= ${GOAL}`,
    pass: ratio >= GOAL,
  });
  for (const [index, receiver] of RECEIVERS.entries()) {
    lines.push([
      receiver.name(runtime.server),
      fmt(results[index]!.rps),
      `${results[index]!.p50} ms`,
      `${results[index]!.p99} ms`,
    ]);
  }
  notes.push(`${runtime.name}: ${version}.`);
}

report({
  title: 'Webhook throughput on Bun and Deno',
  command: 'npx tsx bench/webhook-runtimes.bench.ts',
  rows,
  details: [
    [
      "The built package runs in each runtime on that runtime's own server (`Bun.serve`, `Deno.serve`),",
      `each receiver in its own process; autocannon, in a Node process of its own, keeps ${CONNECTIONS}`,
      `connections busy posting a ${fmt(Buffer.byteLength(BODY))}-byte image event (\`TIMImageElem\` with three`,
      'renditions), each request with its own `MsgKey`, so that dedupe lets every one through. The SDK',
      'handler parses, validates and deduplicates (in-memory store) each event and calls an `onEvent` that',
      'counts it; the raw receiver reads the body with `request.json()` and answers the same 200, headers',
      `and body. Per runtime, median of ${ROUNDS} interleaved rounds of ${SECONDS} s each after a 1 s warm-up`,
      "per receiver (ratio: median of each round's ratio). Latency is autocannon's, in ms (1 ms resolution).",
    ].join(' '),
    '',
    ...(lines.length > 0
      ? [table(['receiver', 'requests/s', 'p50', 'p99'], lines, '---|---:|---:|---:'), '']
      : []),
    ...notes.map((note) => `- ${note}`),
  ].join('\n'),
});
