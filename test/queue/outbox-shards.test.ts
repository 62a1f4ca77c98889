// One outbox over several queues (`createOutbox({ shards })`), against a real redis-server (and, in
// CI's cluster run, a Redis Cluster) and the fake OA server serving several accounts: each account's
// jobs in one queue, the accounts spread over the queues, and everything else as with one queue.
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAccounts,
  OAAbortError,
  type OAAccounts,
  OAConfigError,
  OATimeoutError,
  OAValidationError,
} from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxCounts, type OutboxJobEvent } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { accountStore, servedAccounts, texts } from '../accounts/support.js';
import { ON_CLUSTER, REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

const EMPTY: OutboxCounts = { waiting: 0, delayed: 0, active: 0, delivered: 0, failed: 0, unknown: 0 };
const ACCOUNTS = 8;
const SHARDS = 4;

describe.skipIf(!REDIS_SERVER)('outbox with shards', () => {
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

  const open = async () => {
    const served = servedAccounts(ACCOUNTS);
    mock = await createMockServer({ accounts: served, rateLimit: false });
    accounts = createAccounts({
      credentials: accountStore(served).credentials,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'sharded', shards: SHARDS });
    return { mock, accounts, outbox };
  };
  const shop = (i: number) => `shop-${i + 1}`;

  /**
   * The queue (as named in its keys, hash tag braces left out) that holds the job of each id: BullMQ's
   * job hash, or the outbox's record of a job waiting for its turn.
   */
  const queueOfJobs = async (name = 'sharded'): Promise<Map<string, string>> => {
    const where = new Map<string, string>();
    const keys = [
      ...(await shared.redis.keys(`bull:*${name}*:[ak]-*`)),
      ...(await shared.redis.keys(`bull:*${name}*:oa:job:[ak]-*`)),
    ];
    for (const key of keys) {
      const match = new RegExp(`^bull:\\{?(${name}(?:#\\d+)?)\\}?:(?:oa:job:)?([ak]-[^:]+)$`).exec(key);
      if (match) where.set(match[2] as string, match[1] as string);
    }
    return where;
  };

  it("each account's jobs are kept in one queue, the accounts spread over the queues; the rest as with one", async () => {
    const { mock, accounts, outbox } = await open();
    const heard: OutboxJobEvent[] = [];
    outbox.on('delivered', (e) => heard.push(e));
    for (let i = 0; i < ACCOUNTS; i++) {
      const added = await outbox.add(
        'sendText',
        { user_id: 'u', msg: `k of ${shop(i)}` },
        { key: 'k', account: shop(i) },
      );
      expect(added).toMatchObject({ added: 1, known: 0 });
    }
    expect(
      await outbox.add('sendText', { user_id: 'u', msg: 'again' }, { key: 'k', account: shop(0) }),
    ).toMatchObject({
      added: 0,
      known: 1,
    });
    await outbox.add('sendText', { user_id: 'u', msg: 'plain' }, { key: 'plain' });
    await outbox.add('sendText', { user_id: 'u', msg: 'x' }, { key: 'x', account: shop(1) });

    const where = await queueOfJobs();
    // Every account's jobs in one queue; the jobs without an account in the first, `name` itself.
    for (let i = 0; i < ACCOUNTS; i++) expect(where.get(`a-${shop(i)}/k`)).toMatch(/^sharded/);
    expect(where.get(`a-${shop(1)}/x`)).toBe(where.get(`a-${shop(1)}/k`));
    expect(where.get('k-plain')).toBe('sharded');
    const used = new Set([...where.values()]);
    expect(used.size).toBeGreaterThan(1);
    // On a Redis Cluster each queue is a hash tag of its own.
    if (ON_CLUSTER) {
      const keys = [
        ...(await shared.redis.keys('bull:*sharded*:[ak]-*')),
        ...(await shared.redis.keys('bull:*sharded*:oa:*')),
      ];
      expect(keys.every((key) => /^bull:\{sharded(#\d+)?\}:/.test(key))).toBe(true);
    }

    expect(await outbox.counts()).toEqual({ ...EMPTY, waiting: ACCOUNTS + 2 });
    expect(await outbox.counts({ account: shop(1) })).toEqual({ ...EMPTY, waiting: 2 });
    expect(await outbox.get('k', { account: shop(2) })).toEqual({ state: 'waiting' });
    expect(await outbox.get('plain')).toEqual({ state: 'waiting' });
    expect(await outbox.get('k')).toBeUndefined();
    expect(await outbox.cancel('x', { account: shop(1) })).toEqual({ cancelled: true });
    expect(await outbox.get('x', { account: shop(1) })).toBeUndefined();

    const worker = outbox.work({ accounts, client: accounts.client(shop(0)), concurrency: 2 });
    const told: string[] = [];
    worker.on('delivered', (e) => told.push(`${e.account ?? '-'}/${e.key}`));
    for (let i = 0; i < ACCOUNTS; i++) {
      const states = await outbox.waitFor(['k'], { account: shop(i), timeoutMs: 10_000 });
      expect([...states]).toEqual([['k', { state: 'delivered', result: 'success' }]]);
    }
    expect((await outbox.waitFor(['plain'], { timeoutMs: 10_000 })).get('plain')?.state).toBe('delivered');
    await expect.poll(() => told.length, { timeout: 5000 }).toBe(ACCOUNTS + 1);
    await worker.close();

    for (let i = 0; i < ACCOUNTS; i++)
      expect(texts(mock, shop(i)).sort()).toEqual(i === 0 ? ['k of shop-1', 'plain'] : [`k of ${shop(i)}`]);
    expect(await outbox.counts()).toEqual({ ...EMPTY, delivered: ACCOUNTS + 1 });
    expect(await outbox.counts({ account: shop(3) })).toEqual({ ...EMPTY, delivered: 1 });
    // The outbox's listeners hear every queue.
    await expect.poll(() => heard.length, { timeout: 5000 }).toBe(ACCOUNTS + 1);
    expect(
      heard
        .filter((e) => e.account !== undefined)
        .map((e) => e.account)
        .sort(),
    ).toEqual(Array.from({ length: ACCOUNTS }, (_, i) => shop(i)).sort());
  });

  it('addMany checks an array whole before any queue stores it, and says which keys were known, in order', async () => {
    const { outbox } = await open();
    const entry = (i: number, key = `c${i}`) => ({
      method: 'sendText' as const,
      params: { user_id: 'u', msg: `c${i}` },
      key,
      account: shop(i % ACCOUNTS),
    });
    const bad = [
      ...Array.from({ length: 12 }, (_, i) => entry(i)),
      { ...entry(12), params: { user_id: 'u' } as never },
    ];
    await expect(outbox.addMany(bad)).rejects.toThrow(OAValidationError);
    await expect(outbox.addMany(bad)).rejects.toThrow(/entry 13/);
    expect(await outbox.counts()).toEqual(EMPTY);

    const first = await outbox.addMany(Array.from({ length: 12 }, (_, i) => entry(i)));
    expect(first).toEqual({ added: 12, known: 0, knownKeys: [] });
    // Known again: c3, c10 and c7, across queues, named in the order given.
    const again = await outbox.addMany(
      (function* () {
        yield entry(3);
        yield entry(20, 'new-1');
        yield entry(10);
        yield entry(21, 'new-2');
        yield entry(7);
      })(),
    );
    expect(again).toEqual({ added: 2, known: 3, knownKeys: ['c3', 'c10', 'c7'] });
    expect(await outbox.counts()).toEqual({ ...EMPTY, waiting: 14 });
  });

  it("waitFor('all') spans every queue, and its bound and signal end the waits of all of them", async () => {
    const { outbox } = await open();
    await outbox.add('sendText', { user_id: 'u', msg: 'later' }, { key: 'later', delay: 60_000 });
    const started = Date.now();
    await expect(outbox.waitFor('all', { timeoutMs: 300 })).rejects.toThrow(OATimeoutError);
    const stop = new AbortController();
    const waiting = outbox.waitFor('all', { signal: stop.signal });
    setTimeout(() => stop.abort(), 100);
    await expect(waiting).rejects.toThrow(OAAbortError);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await outbox.cancel('later')).toEqual({ cancelled: true });
    expect(await outbox.waitFor('all', { timeoutMs: 5000 })).toEqual(new Map());
  });

  it('spreads the accounts over 8 queues by default on a Redis Cluster, keeps one queue on a single Redis', async () => {
    const plain = createOutbox({ connection: { url: shared.server.url }, name: 'default' });
    try {
      for (let i = 0; i < 16; i++) {
        await plain.add('sendText', { user_id: 'u', msg: 'm' }, { key: 'k', account: `acct-${i}` });
      }
      const queues = new Set((await queueOfJobs('default')).values());
      if (ON_CLUSTER) expect(queues.size).toBeGreaterThan(1);
      else expect([...queues]).toEqual(['default']);
      expect(await plain.counts()).toEqual({ ...EMPTY, waiting: 16 });
    } finally {
      await plain.close();
    }
  });

  it('refuses a shards option that is not a whole number from 1 to 1,024', () => {
    const connection = { url: shared.server.url };
    for (const shards of [0, 1.5, 1025, '4']) {
      expect(() => createOutbox({ connection, shards: shards as number })).toThrow(OAConfigError);
    }
    expect(() => createOutbox({ connection, shards: 3 }).close()).not.toThrow();
  });
});
