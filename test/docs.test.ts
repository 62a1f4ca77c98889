import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run docs` (TypeDoc, with the repository's typedoc.json) into a folder of its own: it fails on a
 * warning, an undocumented export among them, so that it succeeds says every export is documented. The
 * reference is Markdown, as it ships in the package (docs/api), readable in an editor.
 */
const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
let out: string | undefined;

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

describe('the API reference', () => {
  it('builds as Markdown, one page per entry point, with no undocumented export and parameter types named', {
    timeout: 180_000,
  }, async () => {
    const config = JSON.parse(await readFile(join(root, 'typedoc.json'), 'utf8')) as {
      treatWarningsAsErrors: boolean;
      validation: { notDocumented: boolean };
      out: string;
    };
    expect([config.treatWarningsAsErrors, config.validation.notDocumented]).toEqual([true, true]);
    // Where the package's `files` take it from.
    expect(config.out).toBe('docs/api');
    out = await mkdtemp(join(tmpdir(), 'oa-docs-'));
    const typedoc = join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');
    const { stdout } = await run(process.execPath, [typedoc, '--out', out], { cwd: root, timeout: 170_000 });
    expect(stdout).not.toMatch(/warning|error/i);
    const pages = (await readdir(out, { recursive: true })).filter((f) => f.endsWith('.md')).sort();
    expect(pages).toEqual([
      'README.md',
      'oa-messaging.md',
      'oa-messaging/bot.md',
      'oa-messaging/queue.md',
      'oa-messaging/redis.md',
      'oa-messaging/testing.md',
      'oa-messaging/testing/msw.md',
      'oa-messaging/webhook.md',
    ]);
    // It ships in the package: a few hundred KB at most.
    const sizes = await Promise.all(pages.map(async (page) => (await stat(join(out ?? '', page))).size));
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThan(500_000);
    const client = await readFile(join(out, 'oa-messaging.md'), 'utf8');
    expect(client).toContain('**broadcast**(`params`, `options?`): `Promise`\\<[`BroadcastRecord`]');
    expect(client).toContain('**sendText**(`params`, `options?`): `Promise`\\<`"success"`\\>');
    expect(client).toContain('**generateToken**(`options?`): `Promise`\\<[`TokenPair`]');
    // The zod fields carry their documentation.
    expect(client).toContain('How long the job is expected to take.');
  });
});
