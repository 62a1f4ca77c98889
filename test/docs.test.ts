import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `npm run docs` (TypeDoc, with the repository's typedoc.json) into a folder of its own: it fails on a
 * warning, an undocumented export among them, so that it succeeds says every export is documented.
 */
const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
let out: string | undefined;

afterAll(async () => {
  if (out) await rm(out, { recursive: true, force: true });
});

/** The text of an HTML page, tags removed. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"');

describe('the API reference', () => {
  it('builds with no undocumented export, pages named by entry point, parameter types named', {
    timeout: 180_000,
  }, async () => {
    const config = JSON.parse(await readFile(join(root, 'typedoc.json'), 'utf8')) as {
      treatWarningsAsErrors: boolean;
      validation: { notDocumented: boolean };
    };
    expect([config.treatWarningsAsErrors, config.validation.notDocumented]).toEqual([true, true]);
    out = await mkdtemp(join(tmpdir(), 'oa-docs-'));
    const typedoc = join(root, 'node_modules', 'typedoc', 'bin', 'typedoc');
    const { stdout } = await run(process.execPath, [typedoc, '--out', out], { cwd: root, timeout: 170_000 });
    expect(stdout).not.toMatch(/warning|error/i);
    expect((await readdir(join(out, 'modules'))).sort()).toEqual([
      'oa-messaging.html',
      'oa-messaging_queue.html',
      'oa-messaging_redis.html',
      'oa-messaging_testing.html',
      'oa-messaging_testing_msw.html',
      'oa-messaging_webhook.html',
    ]);
    const client = textOf(await readFile(join(out, 'classes', 'oa-messaging.OAClient.html'), 'utf8'));
    expect(client).toMatch(/broadcast\(\s*params: BroadcastParams,/);
    expect(client).toMatch(
      /sendText\(params: SendTextParams, options\?: RequestOptions\): Promise<"success">/,
    );
    expect(client).toMatch(/generateToken\(options\?: RequestOptions\): Promise<TokenPair>/);
    // The zod fields carry their documentation.
    const record = textOf(
      await readFile(join(out, 'interfaces', 'oa-messaging.BroadcastRecord.html'), 'utf8'),
    );
    expect(record).toContain('How long the job is expected to take.');
  });
});
