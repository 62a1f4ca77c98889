// What an operator asks of one outbox for every account, and does, against a real redis-server (and, in
// CI's cluster run, a Redis Cluster) and the fake OA server serving several accounts: accounts({ top })
// agrees with counts({ account }), a paused account starts nothing while the others are delivered,
// cancelAll({ account, bulk: true }) stops a campaign and leaves that account's replies going, and
// drain() removes every job not started, those waiting for their account's turn included.
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { accountStore, servedAccounts, texts } from '../accounts/support.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

const sends = (account: string, n: number, prefix: string, bulk = false): OutboxEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    method: 'sendText' as const,
    params: { user_id: 'u', msg: `${prefix}${i}` },
    key: `${prefix}${i}`,
    account,
    ...(bulk ? { bulk: true } : {}),
  }));

describe.skipIf(!REDIS_SERVER)('the outbox, operated', () => {
  const shared = useRedisServer();
  let outbox: Outbox | undefined;
  let accounts: OAAccounts | undefined;
  let mock: MockServer | undefined;

  afterEach(async () => {
    await outbox?.close();
    await accounts?.close();
    await mock?.close();
    outbox = accounts = mock = undefined;
  });

  async function open(n: number) {
    const served = servedAccounts(n);
    mock = await createMockServer({ accounts: served, rateLimit: false });
    accounts = createAccounts({
      credentials: accountStore(served).credentials,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'operated' });
    return { mock, accounts, outbox };
  }

  it('accounts({ top }) lists the busiest first, each agreeing with counts({ account })', async () => {
    const { outbox } = await open(3);
    await outbox.addMany([
      ...sends('shop-1', 2, 'a'),
      ...sends('shop-2', 5, 'b'),
      ...sends('shop-3', 1, 'c'),
    ]);
    const all = await outbox.accounts();
    expect(all.map((a) => a.account)).toEqual(['shop-2', 'shop-1', 'shop-3']);
    for (const status of all) {
      const { account, paused, oldestWaitingMs, ...counts } = status;
      expect(counts).toEqual(await outbox.counts({ account }));
      expect(paused).toBe(false);
      expect(oldestWaitingMs).toBeGreaterThanOrEqual(0);
    }
    expect((await outbox.accounts({ top: 1 })).map((a) => a.account)).toEqual(['shop-2']);
    await expect(outbox.accounts({ top: 0 })).rejects.toThrow(/top must be a positive integer/);
  });

  it('a paused account starts nothing while the others are delivered; resumed, its jobs go', async () => {
    const { mock, accounts, outbox } = await open(2);
    await outbox.pause({ account: 'shop-1' });
    await outbox.addMany([...sends('shop-1', 4, 'p'), ...sends('shop-2', 4, 'o')]);
    const worker = outbox.work({ accounts, concurrency: 4 });
    try {
      await outbox.waitFor(['o0', 'o1', 'o2', 'o3'], { account: 'shop-2', timeoutMs: 10_000 });
      // Time for a turn of shop-1, had it one.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(texts(mock, 'shop-1')).toEqual([]);
      expect((await outbox.accounts()).find((a) => a.account === 'shop-1')).toMatchObject({
        paused: true,
        waiting: 4,
        delivered: 0,
      });
      await outbox.resume({ account: 'shop-1' });
      await outbox.waitFor(['p0', 'p1', 'p2', 'p3'], { account: 'shop-1', timeoutMs: 10_000 });
      expect(texts(mock, 'shop-1').sort()).toEqual(['p0', 'p1', 'p2', 'p3']);
    } finally {
      await worker.close();
    }
  });

  it('a job admitted before the pause does not start until resume', async () => {
    const { mock, accounts, outbox } = await open(1);
    // The first send is slow at the OA: while it is out, the second is admitted to BullMQ's wait list.
    mock
      .account('shop-1')
      .injectFault({ kind: 'delay', delayMs: 1000 }, { path: '/broadcast-message', times: 1 });
    await outbox.addMany(sends('shop-1', 2, 'j'));
    const worker = outbox.work({ accounts, concurrency: 1 });
    try {
      await expect
        .poll(() => mock?.account('shop-1').requests.length, { timeout: 5000, interval: 20 })
        .toBeGreaterThan(1);
      // j1 has left its lane: admitted to BullMQ's wait list, behind j0.
      await expect
        .poll(async () => (await outbox?.accounts())?.[0]?.oldestWaitingMs, { timeout: 5000, interval: 20 })
        .toBeUndefined();
      await outbox.pause({ account: 'shop-1' });
      await outbox.waitFor(['j0'], { account: 'shop-1', timeoutMs: 5000 });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(texts(mock, 'shop-1')).toEqual(['j0']);
      expect((await outbox.get('j1', { account: 'shop-1' }))?.state).not.toBe('delivered');
      await outbox.resume({ account: 'shop-1' });
      await outbox.waitFor(['j1'], { account: 'shop-1', timeoutMs: 10_000 });
      expect(texts(mock, 'shop-1')).toEqual(['j0', 'j1']);
    } finally {
      await worker.close();
    }
  });

  it("cancelAll({ account, bulk: true }) stops the campaign and leaves the account's replies going", async () => {
    const { mock, accounts, outbox } = await open(2);
    await outbox.pause({ account: 'shop-1' });
    await outbox.addMany([
      ...sends('shop-1', 20, 'campaign', true),
      ...sends('shop-1', 3, 'reply'),
      ...sends('shop-2', 5, 'other', true),
    ]);
    expect(await outbox.cancelAll({ account: 'shop-1', bulk: true })).toEqual({ cancelled: 20 });
    await outbox.resume({ account: 'shop-1' });
    const worker = outbox.work({ accounts, concurrency: 4 });
    try {
      await outbox.waitFor(['reply0', 'reply1', 'reply2'], { account: 'shop-1', timeoutMs: 10_000 });
      await outbox.waitFor('all', { account: 'shop-2', timeoutMs: 10_000 });
      expect(texts(mock, 'shop-1').sort()).toEqual(['reply0', 'reply1', 'reply2']);
      expect(texts(mock, 'shop-2')).toHaveLength(5);
      expect(await outbox.get('campaign0', { account: 'shop-1' })).toBeUndefined();
      expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ waiting: 0, delivered: 3 });
    } finally {
      await worker.close();
    }
    await expect(outbox.cancelAll({ account: '' })).rejects.toThrow(/needs \{ account \}/);
  });

  it('cancelAll and drain reach the jobs waiting behind an order group, and the group goes on after', async () => {
    const { mock, accounts, outbox } = await open(1);
    const grouped = (n: number, prefix: string, bulk: boolean): OutboxEntry[] =>
      Array.from({ length: n }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u1', msg: `${prefix}${i}` },
        key: `${prefix}${i}`,
        account: 'shop-1',
        orderGroup: 'u1',
        ...(bulk ? { bulk: true } : {}),
      }));
    await outbox.addMany([...grouped(3, 'g', true), ...grouped(2, 'h', false)]);
    expect(await outbox.cancelAll({ account: 'shop-1', bulk: true })).toEqual({ cancelled: 3 });
    expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ waiting: 2 });
    const worker = outbox.work({ accounts, concurrency: 2 });
    try {
      await outbox.waitFor(['h0', 'h1'], { account: 'shop-1', timeoutMs: 10_000 });
      expect(texts(mock, 'shop-1')).toEqual(['h0', 'h1']);
    } finally {
      await worker.close();
    }
    await outbox.addMany(grouped(3, 'k', false));
    expect(await outbox.drain()).toEqual({ cancelled: 3 });
    expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ waiting: 0, delayed: 0 });
  });

  it('a key cancelled behind its order group and added again goes at the end of the group', async () => {
    const { mock, accounts, outbox } = await open(1);
    const reply = (key: string): OutboxEntry => ({
      method: 'sendText' as const,
      params: { user_id: 'u1', msg: key },
      key,
      account: 'shop-1',
      orderGroup: 'u1',
    });
    await outbox.addMany([reply('r0'), reply('r1'), reply('r2')]);
    expect(await outbox.cancel('r1', { account: 'shop-1' })).toEqual({ cancelled: true });
    await outbox.add(
      'sendText',
      { user_id: 'u1', msg: 'r1' },
      { key: 'r1', account: 'shop-1', orderGroup: 'u1' },
    );
    const worker = outbox.work({ accounts, concurrency: 4 });
    try {
      await outbox.waitFor(['r0', 'r1', 'r2'], { account: 'shop-1', timeoutMs: 10_000 });
      expect(texts(mock, 'shop-1')).toEqual(['r0', 'r2', 'r1']);
    } finally {
      await worker.close();
    }
  });

  it('drain() removes every job not started, parked ones and those without an account; drain({ account }) one account', async () => {
    const { outbox } = await open(2);
    await outbox.addMany([...sends('shop-1', 3, 'a'), ...sends('shop-2', 4, 'b')]);
    await outbox.add('sendText', { user_id: 'u', msg: 'plain' }, { key: 'plain' });
    expect(await outbox.drain({ account: 'shop-1' })).toEqual({ cancelled: 3 });
    expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ waiting: 0 });
    expect(await outbox.drain()).toEqual({ cancelled: 5 });
    expect(await outbox.counts()).toMatchObject({ waiting: 0, delayed: 0, active: 0 });
    // Nothing is left for a worker: the drained accounts leave the list once nothing of them is kept.
    expect(await outbox.accounts()).toEqual([]);
  });
});
