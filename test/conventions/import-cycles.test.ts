// `npm run check:cycles` (which CI runs) refuses an import cycle that runs through a package import
// (`#core-runtime`, resolved by package.json "imports" per runtime condition), and passes today's tree.
// The planted cycle lives in a copy of src/: it closes only under the `workerd` condition.
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectOutput } from '../helpers/run-script.js';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'oa-cycles-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `npm run check:cycles` in `cwd`: its exit code and output, the child killed after 90 s. */
async function checkCycles(cwd: string): Promise<{ code: number | null; output: string }> {
  const child = spawn('npm', ['run', '--silent', 'check:cycles'], { cwd, stdio: 'pipe' });
  const output = collectOutput(child);
  const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  clearTimeout(killer);
  return { code, output: output() };
}

describe('npm run check:cycles', () => {
  it('refuses a cycle through #core-runtime that only the workerd condition closes, and names it', async () => {
    for (const part of ['src', '.ci', 'package.json'])
      cpSync(join(ROOT, part), join(dir, part), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    writeFileSync(
      join(dir, 'src/core/planted.ts'),
      "import { runtime } from '#core-runtime';\n\nexport const plantedRuntime = (): string => runtime();\n",
    );
    appendFileSync(
      join(dir, 'src/core/runtime-workerd.ts'),
      "\nexport { plantedRuntime } from './planted.js';\n",
    );

    const { code, output } = await checkCycles(dir);
    expect(code, output).not.toBe(0);
    expect(output).toMatch(
      /conditions: workerd\): .*src\/core\/planted\.ts -> src\/core\/runtime-workerd\.ts/,
    );
    // Node's and the web runtime files do not import the planted file: no cycle is reported for them.
    expect(output).not.toMatch(/conditions: node\)/);
  }, 120_000);

  it("passes today's tree", async () => {
    const { code, output } = await checkCycles(ROOT);
    expect(code, output).toBe(0);
    expect(output).toContain('no import cycle in src');
  }, 120_000);
});
