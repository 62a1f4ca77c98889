/**
 * Runs every `bench/*.bench.ts` in turn, each in its own Node process (so one benchmark's JIT state and
 * garbage do not colour the next), and exits non-zero if any of them fails.
 *
 *   npm run bench
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const files = readdirSync(dir)
  .filter((name) => name.endsWith('.bench.ts'))
  .sort();

let failed = 0;
for (const file of files) {
  console.log(`\n## ${file}\n`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', `${dir}${file}`], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed += 1;
    console.error(`${file} failed (${result.signal ?? `exit code ${result.status}`})`);
  }
}

console.log(`\n${files.length - failed}/${files.length} benchmarks succeeded.`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
