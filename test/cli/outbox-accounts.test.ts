// `oa outbox add|work|status|cancel --account` run as the built binary, against a real redis-server
// and the fake API: keys per account, a worker for one account's turns.
import { describe, expect, it } from 'vitest';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { fakeServer, oa } from './run-oa.js';

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
});
