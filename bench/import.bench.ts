/**
 * Cold import time of the built package, ESM (`import`) and CommonJS (`require`), each in a fresh Node
 * process, beside undici's own import time measured the same way in the same run. Builds first.
 *
 *   npx tsx bench/import.bench.ts
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, report, table } from './support.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 15;
const GOAL_MS = 150;

execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'ignore' });

/** Milliseconds from the start of the import to its end, in a fresh process (Node's own start excluded). */
function timeImport(kind: 'esm' | 'cjs', specifier: string): number {
  const code =
    kind === 'esm'
      ? `const t = performance.now(); await import(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`
      : `const t = performance.now(); require(${JSON.stringify(specifier)}); process.stdout.write(String(performance.now() - t));`;
  const args = kind === 'esm' ? ['--input-type=module', '-e', code] : ['-e', code];
  return Number(execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' }));
}

const cases = [
  { name: "`import('oa-messaging')`", kind: 'esm', specifier: 'oa-messaging' },
  { name: "`require('oa-messaging')`", kind: 'cjs', specifier: 'oa-messaging' },
  { name: "`import('oa-messaging/webhook')`", kind: 'esm', specifier: 'oa-messaging/webhook' },
  { name: "`import('undici')` (baseline)", kind: 'esm', specifier: 'undici' },
  { name: "`require('undici')` (baseline)", kind: 'cjs', specifier: 'undici' },
] as const;

const samples = cases.map((): number[] => []);
timeImport('esm', 'oa-messaging');
// Runs interleave the cases, so a burst of load elsewhere on the machine does not land on one only.
for (let run = 0; run < RUNS; run++) {
  cases.forEach((c, index) => {
    samples[index]!.push(timeImport(c.kind, c.specifier));
  });
}
const medians = samples.map((values) => median(values));
const [esm, cjs, , undiciEsm, undiciCjs] = medians as [number, number, number, number, number];
const ms = (value: number) => `${value.toFixed(1)} ms`;

report({
  title: 'Cold import',
  command: 'npx tsx bench/import.bench.ts',
  rows: (
    [
      ['ESM', esm, undiciEsm],
      ['CommonJS', cjs, undiciCjs],
    ] as const
  ).map(([format, sdk, undici]) => ({
    figure: `cold import, ${format}`,
    sdk: ms(sdk),
    baseline: `${ms(undici)} (undici)`,
    ratio: `${(sdk / undici).toFixed(2)}x`,
    goal: `< ${GOAL_MS} ms`,
    pass: sdk < GOAL_MS,
  })),
  details: [
    'The time `import` or `require` of the built package takes in a fresh Node process (from just before',
    "the import to just after it; Node's own start is not counted), beside undici's, measured the same",
    `way in the same run. Median of ${RUNS} runs each, interleaved. The package resolves itself by name`,
    'through its `exports` map. undici, form-data and p-retry are loaded by the first request, upload or',
    'retry that needs them, not at import; zod (the schemas) loads at import.',
    '',
    table(
      ['case', 'median', 'min', 'max'],
      cases.map((c, index) => {
        const values = samples[index]!;
        return [c.name, ms(medians[index]!), ms(Math.min(...values)), ms(Math.max(...values))];
      }),
      '---|---:|---:|---:',
    ),
  ].join('\n'),
});
