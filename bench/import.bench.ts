/**
 * Cold import time of the built package, ESM (`import`) and CommonJS (`require`), each in a fresh Node
 * process, beside openai's (another API SDK; a dev dependency used only here) and undici's, measured
 * the same way in the same run. Builds first.
 *
 *   npx tsx bench/import.bench.ts
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { median, report, table } from './support.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = 11;
/** Goals, as ratios to openai's import in the same run: the package, and its webhook entry alone. */
const GOAL_RATIO = 1;
const GOAL_WEBHOOK_RATIO = 0.8;

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
  { name: "`import('openai')` (baseline)", kind: 'esm', specifier: 'openai' },
  { name: "`require('openai')` (baseline)", kind: 'cjs', specifier: 'openai' },
  { name: "`import('undici')`", kind: 'esm', specifier: 'undici' },
  { name: "`require('undici')`", kind: 'cjs', specifier: 'undici' },
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
const [esm, cjs, webhook, openaiEsm, openaiCjs] = medians as [number, number, number, number, number];
const ms = (value: number) => `${value.toFixed(1)} ms`;

report({
  title: 'Cold import',
  command: 'npx tsx bench/import.bench.ts',
  rows: (
    [
      ['`oa-messaging`, ESM', esm, openaiEsm, GOAL_RATIO],
      ['`oa-messaging`, CommonJS', cjs, openaiCjs, GOAL_RATIO],
      ['`oa-messaging/webhook`, ESM', webhook, openaiEsm, GOAL_WEBHOOK_RATIO],
    ] as const
  ).map(([what, sdk, openai, goal]) => ({
    figure: `cold import of ${what}`,
    sdk: ms(sdk),
    baseline: `${ms(openai)} (openai)`,
    ratio: `${(sdk / openai).toFixed(2)}x`,
    goal: `<= ${goal}`,
    pass: sdk / openai <= goal,
  })),
  details: [
    'The time `import` or `require` of the built package takes in a fresh Node process (from just before',
    "the import to just after it; Node's own start is not counted), beside openai's and undici's, measured the same",
    `way in the same run. Median of ${RUNS} runs each, interleaved. The package resolves itself by name`,
    "through its `exports` map. zod's code comes in the build (tree-shaken into `dist`, not loaded from zod's",
    'own files); undici and form-data are loaded by the first request or upload that needs them, not at import.',
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
