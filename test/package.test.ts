import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
let consumer: string;

/**
 * Packs the package as npm would publish it, installs the tarball into an empty
 * project and loads each entry point with `require` and with `import`.
 */
beforeAll(async () => {
  consumer = await mkdtemp(join(tmpdir(), 'oa-messaging-consumer-'));
  // Build first, then pack without scripts, so that stdout is nothing but npm's JSON.
  await run('npm', ['run', 'build'], { cwd: root });
  const { stdout } = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', consumer],
    {
      cwd: root,
    },
  );
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(consumer, filename)], {
    cwd: consumer,
  });
}, 180_000);

afterAll(async () => {
  if (consumer) await rm(consumer, { recursive: true, force: true });
});

async function node(args: string[]) {
  return run(process.execPath, args, { cwd: consumer, timeout: 20_000 });
}

describe('the packed tarball', () => {
  it('holds dist and the package files only', async () => {
    const files = await readdir(join(consumer, 'node_modules', 'oa-messaging'));
    expect(files.sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'dist', 'package.json']);
  });

  for (const entry of ['oa-messaging', 'oa-messaging/webhook', 'oa-messaging/testing']) {
    it(`${entry} loads with require() and with import, silently and with no handle left open`, async () => {
      const cjs = await node([
        '-e',
        `const m = require('${entry}'); console.log(Object.keys(m).sort().join(','))`,
      ]);
      const esm = await node([
        '--input-type=module',
        '-e',
        `const m = await import('${entry}'); console.log(Object.keys(m).filter((k) => k !== 'default').sort().join(','))`,
      ]);
      expect(cjs.stderr).toBe('');
      expect(esm.stderr).toBe('');
      expect(cjs.stdout.trim().length).toBeGreaterThan(0);
      expect(esm.stdout.trim()).toBe(cjs.stdout.trim());
    });
  }

  it('the client works from the CommonJS build', async () => {
    const { stdout } = await node([
      '-e',
      `const { OAClient, items, OAValidationError } = require('oa-messaging');
       const c = new OAClient({ baseUrl: 'https://oa.example.com', apiKey: 'k', apiSecret: 's' });
       c.broadcast({ target: 'all', items: [items.text('x'), {}] })
         .catch((e) => process.stdout.write(\`\${e instanceof OAValidationError} \${e.name}\`));`,
    ]);
    expect(stdout.trim()).toBe('true OAValidationError');
  });
});
