// `oa outbox add|work|status` run as the built binary, against a real redis-server and the fake API.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
    expect(JSON.parse(added.stdout)).toMatchObject({ added: 21, counts: { waiting: 20 } });

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
    expect(good.stdout).toBe('added 1\ndelivered 0, failed 0, unknown 0, waiting 1, delayed 0, active 0\n');
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
});
