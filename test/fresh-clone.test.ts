import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * What a contributor does first: clone the repository, `npm install`, try the command. The clone is of
 * the commit checked out here (what was committed, not the working tree), with npm's cache preferred so
 * that the install costs no download it does not need.
 */
const run = promisify(execFile);
/**
 * A contributor's shell: the environment without the `npm_*` variables that `npm test` sets for its
 * script (a nested npx reads them as its own configuration).
 */
const shell = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')),
);
const root = new URL('..', import.meta.url).pathname;
let dir: string | undefined;

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a fresh clone', () => {
  it('runs npx oa --help right after npm install', { timeout: 600_000 }, async () => {
    dir = await mkdtemp(join(tmpdir(), 'oa-messaging-clone-'));
    const { stdout: head } = await run('git', ['rev-parse', 'HEAD'], { cwd: root });
    const clone = join(dir, 'repo');
    await run('git', ['clone', '--quiet', '--no-checkout', root, clone], { timeout: 60_000 });
    await run('git', ['checkout', '--quiet', head.trim()], { cwd: clone, timeout: 60_000 });
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: clone,
      env: shell,
      // It builds dist/ too (prepare) and unpacks the runtimes' binaries: 1-2 min here, up to 3 min with
      // both cores busy; the bound leaves room for a slower machine.
      timeout: 330_000,
    });
    // npx builds the package first (its prepare), as the clone's own bin is not linked: a minute or so.
    const { stdout } = await run('npx', ['oa', '--help'], { cwd: clone, env: shell, timeout: 150_000 });
    expect(stdout).toContain('Usage: oa [options] [command]');
    expect(stdout).toContain('mock-server');
  });
});
