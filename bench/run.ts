/**
 * Runs every benchmark, each in its own Node process (so one benchmark's JIT state and garbage do not
 * colour the next), prints one summary table and writes it, with each benchmark's own section, into
 * BENCHMARKS.md. Exits non-zero if a benchmark fails or misses a goal; a benchmark that crashes
 * leaves BENCHMARKS.md as it was.
 *
 *   npm run bench
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BenchReport, table } from './support.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
const out = fileURLToPath(new URL('../BENCHMARKS.md', import.meta.url));
/**
 * In the order of the summary: per call (on Node, many accounts, then on Bun and Deno), a large broadcast, uploads,
 * webhooks (parsing, then throughput on Node, then on Bun and Deno), the limiter, an outbox campaign,
 * the outbox on a Redis Cluster, one outbox for every account, replies first, the ordered inbox, import.
 */
const BENCHES = [
  'overhead.bench.ts',
  'accounts.bench.ts',
  'runtimes.bench.ts',
  'broadcast.bench.ts',
  'upload-memory.bench.ts',
  'webhook-parse.bench.ts',
  'webhook-throughput.bench.ts',
  'webhook-runtimes.bench.ts',
  'limiter.bench.ts',
  'outbox.bench.ts',
  'cluster.bench.ts',
  'outbox-accounts.bench.ts',
  'outbox-replies.bench.ts',
  'inbox-order.bench.ts',
  'import.bench.ts',
];

const work = mkdtempSync(join(tmpdir(), 'oa-bench-'));
const reports: BenchReport[] = [];
const crashed: string[] = [];
let missed = false;
try {
  for (const file of BENCHES) {
    console.log(`\n## ${file}\n`);
    const reportFile = join(work, `${file}.json`);
    const result = spawnSync(process.execPath, ['--import', 'tsx', join(dir, file)], {
      stdio: 'inherit',
      env: { ...process.env, OA_BENCH_REPORT: reportFile },
    });
    let report: BenchReport | undefined;
    try {
      report = JSON.parse(readFileSync(reportFile, 'utf8')) as BenchReport;
    } catch {
      report = undefined;
    }
    if (!report) {
      crashed.push(file);
      console.error(`${file} failed (${result.signal ?? `exit code ${result.status}`}) without a report`);
      continue;
    }
    reports.push(report);
    if (result.status !== 0) missed = true;
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const rows = reports.flatMap((report) =>
  report.rows.map((row) => [
    row.figure,
    row.sdk,
    row.baseline,
    row.ratio,
    row.goal ? `${row.goal}: ${row.pass ? 'met' : '**missed**'}` : '',
    `\`${report.command}\``,
  ]),
);
const summary = table(
  ['figure', 'SDK', 'baseline (same run)', 'ratio', 'goal', 'command'],
  rows,
  '---|---:|---:|---:|---|---',
);
console.log(`\n${summary}\n`);

if (crashed.length > 0) {
  console.error(`Not written to BENCHMARKS.md: ${crashed.join(', ')} failed.`);
  process.exitCode = 1;
} else {
  const cpu = cpus()[0]?.model.trim() ?? 'unknown CPU';
  const date = new Date().toISOString().slice(0, 10);
  const text = [
    '# Benchmarks',
    '',
    `- Date: ${date}`,
    `- Node.js: ${process.version} (${process.platform}, ${process.arch})`,
    `- Machine: ${cpus().length} cores, ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM`,
    '',
    'Every figure on this page comes from one run of `npm run bench` (`bench/run.ts`, which runs each',
    '`bench/*.bench.ts` in its own Node process and writes this file). Each figure is a ratio, or is',
    'measured side by side with its baseline in the same run; the last column is the command that runs',
    'that benchmark alone. On a shared machine, expect some noise between runs.',
    '',
    '## Summary',
    '',
    summary,
    '',
    ...reports.flatMap((report) => [
      `## ${report.title}`,
      '',
      `Command: \`${report.command}\``,
      '',
      report.details,
      '',
    ]),
  ].join('\n');
  writeFileSync(out, text);
  console.log(`Written to BENCHMARKS.md${missed ? '; a goal was missed' : ''}.`);
  if (missed) process.exitCode = 1;
}
