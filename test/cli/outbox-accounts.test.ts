// `oa outbox add|work|status|cancel --account` run as the built binary, against a real redis-server
// and the fake API: keys per account, a worker for one account's turns.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { fakeServer, oa, workDir } from './run-oa.js';

describe.skipIf(!REDIS_SERVER)('oa outbox --account', () => {
  const shared = useRedisServer();

  it("the same key in two accounts is two jobs; work --account sends that account's only", async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const redis = ['--redis', shared.server.url, '--name', 'accounts'];
    const send = (account: string, msg: string) =>
      oa(
        [
          'outbox',
          'add',
          ...redis,
          '--account',
          account,
          '--method',
          'sendText',
          '--params',
          JSON.stringify({ user_id: 'u1', msg }),
          '--key',
          'order-1',
          '--json',
        ],
        { env },
      );
    const a = await send('shop-a', 'from a');
    expect(a.code, a.stderr).toBe(0);
    expect(JSON.parse(a.stdout)).toMatchObject({ added: 1, counts: { waiting: 1 } });
    expect(JSON.parse((await send('shop-b', 'from b')).stdout)).toMatchObject({ added: 1, known: 0 });

    const worked = await oa(['outbox', 'work', ...redis, '--account', 'shop-a', '--until-done'], {
      env,
      timeoutMs: 30_000,
    });
    expect(worked.code, worked.stderr).toBe(0);
    expect(worked.stdout).toBe('delivered 1, failed 0, unknown 0, waiting 0, delayed 0, active 0\n');
    expect(mock.deliveries.map((d) => d.items[0]?.msg)).toEqual(['from a']);

    const one = await oa(
      ['outbox', 'status', ...redis, '--account', 'shop-a', '--key', 'order-1', '--json'],
      {
        env,
      },
    );
    expect(JSON.parse(one.stdout)).toEqual({ state: 'delivered', result: 'success' });
    const b = await oa(['outbox', 'status', ...redis, '--account', 'shop-b', '--json'], { env });
    expect(JSON.parse(b.stdout)).toMatchObject({ waiting: 1, delivered: 0 });
  });

  it('accounts --top, pause and resume --account, cancel --account --bulk: what an operator does', async () => {
    const redis = ['--redis', shared.server.url, '--name', 'operated'];
    const add = async (account: string, key: string, bulk: boolean) => {
      const entry = {
        method: 'sendText',
        params: { user_id: 'u1', msg: key },
        key,
        account,
        ...(bulk ? { bulk } : {}),
      };
      return entry;
    };
    const entries = [
      ...(await Promise.all([1, 2, 3].map((n) => add('shop-a', `campaign-${n}`, true)))),
      await add('shop-a', 'reply-1', false),
      await add('shop-b', 'other-1', false),
    ];
    const file = join(workDir, `operated-${Date.now()}.jsonl`);
    writeFileSync(file, entries.map((e) => JSON.stringify(e)).join('\n'));
    const added = await oa(['outbox', 'add', ...redis, '--file', file, '--json'], { env: {} });
    expect(added.code, added.stderr).toBe(0);

    const top = await oa(['outbox', 'accounts', ...redis, '--top', '1', '--json'], { env: {} });
    expect(top.code, top.stderr).toBe(0);
    expect(JSON.parse(top.stdout)).toMatchObject([{ account: 'shop-a', waiting: 4, paused: false }]);

    expect((await oa(['outbox', 'pause', ...redis, '--account', 'shop-a'], { env: {} })).stdout).toBe(
      'shop-a: paused\n',
    );
    const listed = await oa(['outbox', 'accounts', ...redis], { env: {} });
    expect(listed.stdout).toMatch(/^shop-a \(paused\): /m);
    expect(listed.stdout).toMatch(/^shop-b: /m);

    const cancelled = await oa(['outbox', 'cancel', ...redis, '--account', 'shop-a', '--bulk', '--json'], {
      env: {},
    });
    expect(JSON.parse(cancelled.stdout)).toEqual({ cancelled: 3 });
    const resumed = await oa(['outbox', 'resume', ...redis, '--account', 'shop-a', '--json'], { env: {} });
    expect(JSON.parse(resumed.stdout)).toEqual({ account: 'shop-a', paused: false });
    const after = await oa(['outbox', 'status', ...redis, '--account', 'shop-a', '--json'], { env: {} });
    expect(JSON.parse(after.stdout)).toMatchObject({ waiting: 1 });

    const refused = await oa(['outbox', 'cancel', ...redis], { env: {} });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr, JSON.stringify(refused)).toMatch(/--key, or --account/);
  });
});
