/**
 * One style for every error `oa` prints: `oa: ` then where (a flag, a file and line counted from 1),
 * the rule, and what to do. Commander's own messages included.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { fakeServer, oa, workDir } from './run-oa.js';

describe.concurrent('every error starts with "oa: "', () => {
  it('parser errors, usage errors and refused values alike', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const runs = await Promise.all([
      oa(['send', 'text', '--usr', 'u-1', '--msg', 'hi']),
      oa(['send', 'image', '--user', 'u-1'], { env }),
      oa(['broadcast', '--target', 'selected', '--text', 'hi'], { env }),
      oa(['broadcast', '--items-file', join(workDir, 'missing-items.json'), '--target', 'all'], { env }),
      oa(['send', 'image', '--user', 'u-1', '--url', 'not-a-url'], { env }),
      oa(['token']),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2, 2, 2]);
    for (const run of runs) {
      expect(run.stderr).toMatch(/^oa: /);
      expect(run.stderr).not.toMatch(/^error: |UsageError/m);
    }
    expect(runs[0]?.stderr).toBe(
      "oa: unknown option '--usr'\n(Did you mean --user?)\n(add --help for usage)\n",
    );
    expect(runs[2]?.stderr).toBe('oa: --target selected needs at least one --user\n');
  });

  it("an item's refused field is named with the item, in the SDK's words", async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const item = JSON.stringify({ type: 'oa_image_link', msg: 'https://cdn.example.com/a.png' });
    const run = await oa(['broadcast', '--target', 'all', '--item', item], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('oa: item 1 (link): required: a URL (http or https) (nothing was sent)\n');
    expect(mock.requests).toEqual([]);
  });

  it('a line of an --items-file is counted from 1', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const file = join(workDir, 'items-bad-second.json');
    await writeFile(
      file,
      JSON.stringify([
        { type: 'message', msg: 'ok' },
        { type: 'image', msg: 'nope' },
      ]),
    );
    const run = await oa(['broadcast', '--target', 'all', '--items-file', file], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^oa: item 2 \(msg\): must be an absolute URL/);
  });
});

describe.skipIf(!REDIS_SERVER)('oa outbox add: errors in a campaign file', () => {
  const shared = useRedisServer();

  it('name the line counted from 1, and say nothing was queued', async () => {
    const redis = ['--redis', shared.server.url, '--name', 'style'];
    const file = join(workDir, 'campaign-bad-line.jsonl');
    await writeFile(
      file,
      [
        JSON.stringify({ method: 'sendText', params: { user_id: 'u1', msg: 'a' }, key: 'k1' }),
        JSON.stringify({ method: 'sendText', params: { user_id: 'u2' }, key: 'k2' }),
      ].join('\n'),
    );
    const run = await oa(['outbox', 'add', ...redis, '--file', file]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^oa: .*campaign-bad-line\.jsonl line 2: params\.msg: .*\(nothing was queued\)/,
    );
    expect(run.stderr).not.toContain('nothing was sent');

    const broken = join(workDir, 'campaign-not-json.jsonl');
    await writeFile(broken, `${JSON.stringify({ method: 'sendText', params: {}, key: 'a' })}\n{oops\n`);
    const unreadable = await oa(['outbox', 'add', ...redis, '--file', broken]);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toMatch(/^oa: .*campaign-not-json\.jsonl line 2: not JSON/);
  });
});

describe.concurrent('errors that name the flag and say what to do', () => {
  it('an --file that is missing or a directory: exit 2, the flag and the file named', async () => {
    const missing = join(workDir, 'missing-campaign.jsonl');
    const dir = join(workDir, 'a-directory');
    await mkdir(dir, { recursive: true });
    // Redis is never reached: the file is read first.
    const redis = ['--redis', `redis://127.0.0.1:${await freePort()}`];
    const runs = await Promise.all([
      oa(['outbox', 'add', ...redis, '--file', missing]),
      oa(['outbox', 'add', ...redis, '--file', dir]),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2]);
    expect(runs[0]?.stderr).toBe(`oa: --file ${missing}: no such file\n`);
    expect(runs[1]?.stderr).toBe(`oa: --file ${dir}: is a directory, not a file\n`);
  });

  it('Redis that cannot be reached: exit 1, and how to point oa at it', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const run = await oa(['outbox', 'status', '--redis', url, '--key', 'k1'], { timeoutMs: 60_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^oa: OAConnectionError: .*Redis could not be reached/);
    expect(run.stderr).toContain(
      `\n  Is Redis running at ${url} (--redis)? Start it, or give its URL with --redis URL (or REDIS_URL).\n`,
    );
  });

  it('a receiver at --to that is not there: exit 1, said in flags', async () => {
    const to = `http://127.0.0.1:${await freePort()}/hook`;
    const run = await oa(['inbound', 'text', 'hi', '--to', to]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      new RegExp(
        `^oa: the receiver at --to ${to.replace(/[.]/g, '\\.')} could not be reached \\(ECONNREFUSED\\)`,
      ),
    );
  });

  it('oa --help lists OA_LOG with the other environment variables', async () => {
    const run = await oa(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/OA_LOG=debug\|info\|warn\|error\|off/);
  });
});
