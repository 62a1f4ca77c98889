// `oa outbox add|work|status` run as the built binary, against a real redis-server and the fake API.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOutbox } from '../../src/queue/index.js';
import { tsBlocks } from '../helpers/readme-blocks.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { fakeServer, oa, workDir } from './run-oa.js';

describe.skipIf(!REDIS_SERVER)('oa outbox', () => {
  const shared = useRedisServer();

  it('add a campaign file, work it until done with progress lines, then status', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const redis = ['--redis', shared.server.url, '--name', 'cli'];
    const file = join(workDir, 'campaign.jsonl');
    const lines = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ method: 'sendText', params: { user_id: `u${i}`, msg: `hello ${i}` }, key: `c-${i}` }),
    );
    // A key twice: kept once.
    await writeFile(file, [...lines, lines[0]].join('\n'));

    const added = await oa(['outbox', 'add', ...redis, '--file', file, '--json'], { env });
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ added: 20, known: 1, counts: { waiting: 20 } });

    const worked = await oa(['outbox', 'work', ...redis, '--until-done', '--concurrency', '3'], {
      env,
      timeoutMs: 30_000,
    });
    expect(worked.code, worked.stderr).toBe(0);
    expect(worked.stderr).toMatch(/^outbox 0% 0\/20/m);
    expect(worked.stderr).toMatch(/^outbox 100% 20\/20/m);
    expect(worked.stdout).toBe('delivered 20, failed 0, unknown 0, waiting 0, delayed 0, active 0\n');
    expect(mock.deliveries).toHaveLength(20);

    const status = await oa(['outbox', 'status', ...redis, '--json'], { env });
    expect(JSON.parse(status.stdout)).toEqual({
      waiting: 0,
      delayed: 0,
      active: 0,
      delivered: 20,
      failed: 0,
      unknown: 0,
    });
    const one = await oa(['outbox', 'status', ...redis, '--key', 'c-3', '--json'], { env });
    expect(JSON.parse(one.stdout)).toEqual({ state: 'delivered', result: 'success' });
  });

  it('one send from flags; bad params are refused before anything is stored (exit 2)', async ({
    onTestFinished,
  }) => {
    const { env } = await fakeServer(onTestFinished);
    const redis = ['--redis', shared.server.url, '--name', 'one'];
    const bad = await oa(
      ['outbox', 'add', ...redis, '--method', 'sendText', '--params', '{"user_id":"u1"}', '--key', 'k'],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/msg/);
    const good = await oa(
      [
        'outbox',
        'add',
        ...redis,
        '--method',
        'sendText',
        '--params',
        '{"user_id":"u1","msg":"x"}',
        '--key',
        'k',
      ],
      { env },
    );
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toBe(
      'added 1, already known 0\ndelivered 0, failed 0, unknown 0, waiting 1, delayed 0, active 0\n',
    );
  });

  it('a send whose answer never came: work and status say unknown, and what the operator does', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    // Delivered, then the connection is reset: the worker cannot know.
    mock.injectFault({ kind: 'reset-after-processing' }, { path: '/webhook/broadcast-message' });
    const redis = ['--redis', shared.server.url, '--name', 'maybe'];
    const send = ['--method', 'sendText', '--params', '{"user_id":"u1","msg":"x"}', '--key', 'k'];
    const added = await oa(['outbox', 'add', ...redis, ...send], { env });
    expect(added.code, added.stderr).toBe(0);
    const worked = await oa(['outbox', 'work', ...redis, '--until-done'], { env, timeoutMs: 30_000 });
    expect(worked.code, worked.stderr).toBe(0);
    expect(worked.stdout).toBe('delivered 0, failed 0, unknown 1, waiting 0, delayed 0, active 0\n');
    expect(mock.deliveries).toHaveLength(1);

    const json = await oa(['outbox', 'status', ...redis, '--key', 'k', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ state: 'unknown', error: { deliveryUnknown: true } });
    const text = await oa(['outbox', 'status', ...redis, '--key', 'k'], { env });
    expect(text.stdout).toMatch(/^k: unknown: it may have been delivered; check before sending it again/);
  });

  it('the same file added twice: the second run adds nothing and says the keys were already known', async ({
    onTestFinished,
  }) => {
    const { env } = await fakeServer(onTestFinished);
    const redis = ['--redis', shared.server.url, '--name', 'twice'];
    const file = join(workDir, 'twice.jsonl');
    const lines = Array.from({ length: 5 }, (_, i) =>
      JSON.stringify({ method: 'sendText', params: { user_id: `u${i}`, msg: 'hi' }, key: `t-${i}` }),
    );
    await writeFile(file, lines.join('\n'));
    const first = await oa(['outbox', 'add', ...redis, '--file', file], { env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^added 5, already known 0\n/);
    const second = await oa(['outbox', 'add', ...redis, '--file', file], { env });
    expect(second.stdout).toMatch(/^added 0, already known 5\n/);
    expect(second.stdout).toMatch(/waiting 5,/);
    const json = await oa(['outbox', 'add', ...redis, '--file', file, '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ added: 0, known: 5, counts: { waiting: 5 } });
  });

  it("a job added by the outbox guide's code is known to `oa outbox status` without --name", async ({
    onTestFinished,
  }) => {
    const { env } = await fakeServer(onTestFinished);
    const guide = await readFile(new URL('../../docs/outbox.md', import.meta.url), 'utf8');
    const block = tsBlocks(guide).find((b) => b.code.includes('createOutbox('));
    const line = block?.code.split('\n').find((l) => l.includes('createOutbox('));
    expect(line).toBeDefined();
    // The guide's own call, with this test's Redis as its `connection`.
    const make = new Function('createOutbox', 'connection', `${line}\nreturn outbox;`) as (
      create: typeof createOutbox,
      connection: { url: string },
    ) => ReturnType<typeof createOutbox>;
    const outbox = make(createOutbox, { url: shared.server.url });
    onTestFinished(() => outbox.close());
    await outbox.add('sendText', { user_id: 'u1', msg: 'hi' }, { key: 'readme-1' });
    const status = await oa(['outbox', 'status', '--redis', shared.server.url, '--key', 'readme-1'], { env });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^readme-1: waiting/);
  });

  it('add --at sends no sooner than that time; cancel removes a job not sent yet', async ({
    onTestFinished,
  }) => {
    const { env } = await fakeServer(onTestFinished);
    const redis = ['--redis', shared.server.url, '--name', 'at-cancel'];
    const send = (key: string) => [
      '--method',
      'sendText',
      '--params',
      '{"user_id":"u1","msg":"x"}',
      '--key',
      key,
    ];
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const added = await oa(['outbox', 'add', ...redis, ...send('later'), '--at', at], { env });
    expect(added.code, added.stderr).toBe(0);
    const status = await oa(['outbox', 'status', ...redis, '--key', 'later', '--json'], { env });
    expect(JSON.parse(status.stdout)).toEqual({ state: 'delayed' });

    const bad = await oa(['outbox', 'add', ...redis, ...send('bad'), '--at', 'next tuesday'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--at/);

    const cancelled = await oa(['outbox', 'cancel', ...redis, '--key', 'later'], { env });
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe('later: cancelled\n');
    const gone = await oa(['outbox', 'status', ...redis, '--key', 'later'], { env });
    expect(gone.stdout).toBe('later: not known\n');
    const again = await oa(['outbox', 'cancel', ...redis, '--key', 'later', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ cancelled: false });
  });
});
