/**
 * `sendText` on Bun and on Deno beside each runtime's own `fetch` of the same request, in the same run:
 * the built package (`npm run build` first) runs in the runtime (bench/runtime-sendtext.mjs), against
 * a node:http server in a process of its own that answers at once. In each runtime the two take turns
 * in interleaved blocks and rounds; each figure is a median. A runtime whose binary is missing (npm
 * packages bun and deno) is left out, with a note.
 *
 *   npx tsx bench/runtimes.bench.ts
 *
 * OA_BENCH_QUICK=1: a short run, to check the figures come out; OA_BENCH_RUNTIMES=deno (or bun): one.
 *
 * Roles of this one file: no argument = the measurement; `server` = the answering server.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  BUN_TSCONFIG,
  fmt,
  median,
  percentile,
  report,
  type SummaryRow,
  serveInstantApi,
  spawnInstantApi,
  table,
} from './support.js';

const SELF = fileURLToPath(import.meta.url);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCRIPT = fileURLToPath(new URL('runtime-sendtext.mjs', import.meta.url));
const QUICK = process.env.OA_BENCH_QUICK === '1';
const SIZES = QUICK
  ? { warmup: 200, block: 20, blocks: 10, inFlight: 32, roundCalls: 500, rounds: 3 }
  : { warmup: 3000, block: 50, blocks: 120, inFlight: 32, roundCalls: 2000, rounds: 15 };
/** The longest one runtime's measurement may take before it is stopped. */
const RUNTIME_LIMIT_MS = 5 * 60_000;

type Figures = Record<'fetch' | 'sendText', { times: number[]; rates: number[] }>;

const RUNTIMES = [
  { name: 'Bun', bin: 'bun', args: ['run', `--tsconfig-override=${BUN_TSCONFIG}`, SCRIPT] },
  { name: 'Deno', bin: 'deno', args: ['run', '-A', '--node-modules-dir=manual', SCRIPT] },
] as const;

async function measure(): Promise<void> {
  if (!existsSync(`${ROOT}dist/index.js`)) throw new Error('dist is missing: run npm run build first');
  const { server, baseUrl: url } = await spawnInstantApi(SELF);
  const rows: SummaryRow[] = [];
  const lines: string[][] = [];
  const notes: string[] = [];
  const us = (ms: number) => `${fmt(ms * 1000)} µs`;
  try {
    const only = process.env.OA_BENCH_RUNTIMES?.split(',');
    for (const runtime of RUNTIMES.filter((r) => !only || only.includes(r.bin))) {
      const bin = `${ROOT}node_modules/.bin/${runtime.bin}`;
      if (!existsSync(bin)) {
        notes.push(`${runtime.name}: not measured, ${runtime.bin} is not installed (npm ci installs it).`);
        continue;
      }
      const version = spawnSync(bin, ['--version'], { encoding: 'utf8', timeout: 20_000 }).stdout.split(
        '\n',
      )[0];
      const run = spawnSync(bin, runtime.args, {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: RUNTIME_LIMIT_MS,
        maxBuffer: 64 * 2 ** 20,
        env: { ...process.env, NO_COLOR: '1', OA_BENCH_URL: url, OA_BENCH_SIZES: JSON.stringify(SIZES) },
      });
      if (run.status !== 0)
        throw new Error(`${runtime.name} failed (${run.signal ?? run.status}):\n${run.stderr}`);
      const figures = JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as Figures;
      const [raw, sdk] = [figures.fetch, figures.sendText];
      const latency = median(sdk.times) / median(raw.times);
      const rate = median(sdk.rates) / median(raw.rates);
      rows.push(
        {
          figure: `\`sendText\` time per call on ${runtime.name}, median`,
          sdk: us(median(sdk.times)),
          baseline: `${us(median(raw.times))} (${runtime.name} \`fetch\`)`,
          ratio: `${latency.toFixed(2)}x`,
        },
        {
          figure: `\`sendText\` calls/s on ${runtime.name}, ${SIZES.inFlight} in flight`,
          sdk: fmt(median(sdk.rates)),
          baseline: `${fmt(median(raw.rates))} (${runtime.name} \`fetch\`)`,
          ratio: `${rate.toFixed(2)}x`,
        },
      );
      for (const [name, f] of [
        [`${runtime.name} \`fetch\``, raw],
        [`${runtime.name} SDK \`sendText\``, sdk],
      ] as const) {
        lines.push([name, us(median(f.times)), us(percentile(f.times, 0.99)), fmt(median(f.rates))]);
      }
      notes.push(`${runtime.name}: ${version}.`);
    }
  } finally {
    server.stdin?.end();
  }
  report({
    title: '`sendText` on Bun and Deno',
    command: 'npx tsx bench/runtimes.bench.ts',
    rows,
    details: [
      [
        "The built package runs in each runtime and sends the same request as that runtime's own `fetch`",
        '(same URL, body and headers) to a node:http server in its own process on loopback, which answers',
        `at once. Per-call time: ${SIZES.blocks} blocks of ${SIZES.block} sequential calls each, the two`,
        `taking turns; calls/s: ${SIZES.rounds} rounds of ${SIZES.roundCalls} calls with ${SIZES.inFlight}`,
        'in flight. Medians over the blocks and rounds, all in one run. On Deno each SDK send opens a',
        "connection of its own (Deno's fetch may send a request again on a reused connection that fails),",
        'while the raw `fetch` reuses its connections: most of the gap there is that choice.',
      ].join(' '),
      '',
      table(['contender', 'median', 'p99', 'calls/s (median round)'], lines, '---|---:|---:|---:'),
      '',
      ...notes.map((note) => `- ${note}`),
    ].join('\n'),
  });
}

if (process.argv[2] === 'server') serveInstantApi();
else await measure();
