// One outbox for every account, against a real redis-server and the fake OA server serving several
// accounts: keys per account, get/counts/cancel/waitFor/events with the account, fair turns, the bulk
// lane, a rotated secret that pauses instead of failing.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAValidationError } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxCounts, type OutboxJobEvent } from '../../src/queue/index.js';
import { queueKeyName } from '../../src/redis/keys.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { accountStore, refusedLogins, servedAccounts, texts, tooManyRequests } from '../accounts/support.js';
import { ON_CLUSTER, REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';

const EMPTY: OutboxCounts = { waiting: 0, delayed: 0, active: 0, delivered: 0, failed: 0, unknown: 0 };

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!REDIS_SERVER)('outbox with accounts', () => {
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

  /** The fake with `n` accounts, each limited to `max` sends per `windowMs` (the clients too). */
  const open = async (n: number, limit?: { max: number; windowMs: number }) => {
    const served = servedAccounts(n);
    mock = await createMockServer({
      accounts: served,
      rateLimit: limit ? { general: limit } : false,
    });
    const store = accountStore(served);
    accounts = createAccounts({
      credentials: store.credentials,
      clientOptions: {
        baseUrl: mock.url,
        maxRetries: 0,
        ...(limit ? { rateLimit: { general: limit, upload: { max: 1, windowMs: limit.windowMs } } } : {}),
      },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'accounts' });
    return { mock, accounts, outbox, db: store.db };
  };

  it('the same key in two accounts is two jobs; get, counts, cancel, waitFor and events name the account', async () => {
    const { mock, accounts, outbox } = await open(2);
    const heard: OutboxJobEvent[] = [];
    outbox.on('delivered', (e) => heard.push(e));
    const a = await outbox.add(
      'sendText',
      { user_id: 'u', msg: 'for shop-1' },
      { key: 'order-1', account: 'shop-1' },
    );
    const b = await outbox.add(
      'sendText',
      { user_id: 'u', msg: 'for shop-2' },
      { key: 'order-1', account: 'shop-2' },
    );
    const again = await outbox.add(
      'sendText',
      { user_id: 'u', msg: 'copy' },
      { key: 'order-1', account: 'shop-2' },
    );
    expect([a.added, b.added, again.known]).toEqual([1, 1, 1]);
    await outbox.addMany([
      {
        method: 'sendText',
        params: { user_id: 'u', msg: 'later' },
        key: 'later',
        account: 'shop-1',
        delay: 60_000,
      },
      { method: 'sendText', params: { user_id: 'u', msg: 'c1' }, key: 'c1', account: 'shop-1', bulk: true },
    ]);
    expect(await outbox.get('order-1', { account: 'shop-1' })).toEqual({ state: 'waiting' });
    expect(await outbox.get('later', { account: 'shop-1' })).toEqual({ state: 'delayed' });
    expect(await outbox.get('order-1')).toBeUndefined();
    expect(await outbox.counts({ account: 'shop-1' })).toEqual({ ...EMPTY, waiting: 2, delayed: 1 });
    expect(await outbox.counts({ account: 'shop-2' })).toEqual({ ...EMPTY, waiting: 1 });
    expect(await outbox.counts()).toEqual({ ...EMPTY, waiting: 3, delayed: 1 });
    expect(await outbox.cancel('later', { account: 'shop-1' })).toEqual({ cancelled: true });
    expect(await outbox.get('later', { account: 'shop-1' })).toBeUndefined();

    const worker = outbox.work({ accounts, concurrency: 2 });
    const states = await outbox.waitFor('all', { account: 'shop-1', timeoutMs: 10_000 });
    expect([...states.keys()].sort()).toEqual(['c1', 'order-1']);
    await outbox.waitFor(['order-1'], { account: 'shop-2', timeoutMs: 10_000 });
    await worker.close();
    expect(texts(mock, 'shop-1').sort()).toEqual(['c1', 'for shop-1']);
    expect(texts(mock, 'shop-2')).toEqual(['for shop-2']);
    expect(await outbox.counts({ account: 'shop-1' })).toEqual({ ...EMPTY, delivered: 2 });
    expect(await outbox.counts()).toEqual({ ...EMPTY, delivered: 3 });
    expect(await outbox.get('order-1', { account: 'shop-2' })).toEqual({
      state: 'delivered',
      result: 'success',
    });
    await until(
      () => heard,
      (h) => h.length === 3,
    );
    expect(heard.map((e) => `${e.account}/${e.key}`).sort()).toEqual([
      'shop-1/c1',
      'shop-1/order-1',
      'shop-2/order-1',
    ]);
  });

  it('bad account options are refused before anything is stored', async () => {
    const { outbox } = await open(1);
    const params = { user_id: 'u', msg: 'x' };
    await expect(outbox.add('sendText', params, { key: 'k', account: '' })).rejects.toThrow(
      OAValidationError,
    );
    await expect(outbox.add('sendText', params, { key: 'k', bulk: true })).rejects.toThrow(
      /bulk.*needs account/,
    );
    await expect(
      outbox.add('sendText', params, { key: 'k', account: 'shop-1', priority: 1 }),
    ).rejects.toThrow(/priority/);
    await expect(outbox.get('k', { account: 5 as never })).rejects.toThrow(OAValidationError);
    expect(await outbox.counts()).toEqual(EMPTY);
    expect(() => outbox.work({} as never)).toThrow(/client.*or.*accounts/);
  });

  it('a worker takes only the jobs it has a client for: the others are put back, not failed', async () => {
    const { mock, accounts, outbox } = await open(1);
    await outbox.add('sendText', { user_id: 'u', msg: 'no account' }, { key: 'plain' });
    await outbox.add('sendText', { user_id: 'u', msg: 'of shop-1' }, { key: 'mine', account: 'shop-1' });
    const forAccounts = outbox.work({ accounts });
    await outbox.waitFor(['mine'], { account: 'shop-1', timeoutMs: 5000 });
    await new Promise((r) => setTimeout(r, 300));
    // Put back each time the accounts worker takes it (it may be looking at it right now): not ended.
    expect((await outbox.get('plain'))?.state).toMatch(/^(waiting|delayed|active)$/);
    await forAccounts.close();
    const plain = outbox.work({ client: accounts.client('shop-1') });
    expect((await outbox.waitFor(['plain'], { timeoutMs: 5000 })).get('plain')?.state).toBe('delivered');
    await plain.close();
    expect(texts(mock, 'shop-1').sort()).toEqual(['no account', 'of shop-1']);
  });

  it("fair turns: a small account's send and a reply start within a slot or two while a campaign runs", async () => {
    // 5 sends a second per account: the campaign of shop-1 alone is 8 s of quota.
    const { mock, accounts, outbox } = await open(3, { max: 5, windowMs: 1000 });
    await outbox.addMany(
      Array.from({ length: 40 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `c${i}` },
        key: `c${i}`,
        account: 'shop-1',
        bulk: true,
      })),
    );
    const worker = outbox.work({ accounts, concurrency: 8 });
    await until(
      () => texts(mock, 'shop-1').length,
      (n) => n >= 8,
    );
    const addedAt = Date.now();
    const sentBefore = texts(mock, 'shop-1').length;
    await outbox.add('sendText', { user_id: 'u', msg: 'reply' }, { key: 'r', account: 'shop-1' });
    await outbox.add('sendText', { user_id: 'u', msg: 'small' }, { key: 's', account: 'shop-2' });
    await outbox.add('sendText', { user_id: 'u', msg: 'small' }, { key: 's', account: 'shop-3' });
    await outbox.waitFor(['s'], { account: 'shop-2', timeoutMs: 5000 });
    await outbox.waitFor(['s'], { account: 'shop-3', timeoutMs: 5000 });
    await outbox.waitFor(['r'], { account: 'shop-1', timeoutMs: 5000 });
    const at = (account: string) => mock?.account(account).deliveries[0]?.at ?? Number.POSITIVE_INFINITY;
    // shop-2 and shop-3 have their whole quota: their send starts at once, not after the campaign.
    expect(at('shop-2') - addedAt).toBeLessThan(2000);
    expect(at('shop-3') - addedAt).toBeLessThan(2000);
    // The reply goes after at most the bulk sends already queued in shop-1's limiter.
    const order = texts(mock, 'shop-1');
    expect(order.indexOf('reply') - sentBefore).toBeLessThanOrEqual(2 + 1);
    expect(texts(mock, 'shop-1').length).toBeLessThan(41);
    await worker.close();
    expect(tooManyRequests(mock)).toBe(0);
  });

  it('a rotated secret pauses its account (no refused login per job), the others go on; then all are sent', async () => {
    const { mock, accounts, outbox, db } = await open(2);
    await accounts.client('shop-1').sendText({ user_id: 'u', msg: 'before' });
    mock.account('shop-1').rotateSecret('rotated-secret-1');
    await outbox.addMany([
      ...Array.from({ length: 10 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `p${i}` },
        key: `p${i}`,
        account: 'shop-1',
      })),
      { method: 'sendText', params: { user_id: 'u', msg: 'other' }, key: 'o', account: 'shop-2' },
    ]);
    const worker = outbox.work({ accounts, concurrency: 4 });
    await outbox.waitFor(['o'], { account: 'shop-2', timeoutMs: 5000 });
    await until(
      () => refusedLogins(mock, 'shop-1'),
      (n) => n >= 1,
    );
    // Not failed: waiting (parked or backing off) for working credentials.
    const counts = await outbox.counts({ account: 'shop-1' });
    expect(counts.failed).toBe(0);
    expect(counts.delivered).toBe(0);
    db.set('shop-1', { apiKey: 'key-shop-1', apiSecret: 'rotated-secret-1' });
    const states = await outbox.waitFor('all', { account: 'shop-1', timeoutMs: 20_000 });
    expect([...states.values()].every((s) => s.state === 'delivered')).toBe(true);
    await worker.close();
    expect(texts(mock, 'shop-1')).toHaveLength(11);
    // One refusal per login attempt of the account, not one per queued job.
    expect(refusedLogins(mock, 'shop-1')).toBeLessThanOrEqual(3);
  });

  it('jobs reach BullMQ in batches: at most twice the concurrency wait there, refilled once the concurrency is free', async () => {
    const name = 'batches';
    const { mock, accounts, outbox: opened } = await open(20);
    await opened.close();
    outbox = createOutbox({ connection: { url: shared.server.url }, name, shards: 1 });
    const store = outbox;
    // Each account's sends take from 20 to 115 ms at the fake, so that they end one by one: the worker
    // (4 at a time) is slower than the turns.
    for (const [i, account] of mock.accounts.entries()) {
      account.injectFault(
        { kind: 'delay', delayMs: 20 + 5 * i },
        { times: Number.POSITIVE_INFINITY, path: '/webhook/broadcast-message' },
      );
    }
    const sends = 160;
    await store.addMany(
      Array.from({ length: sends }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `m${i}` },
        key: `m${i}`,
        account: `shop-${(i % 20) + 1}`,
      })),
    );
    // BullMQ's wait list, read every few ms while the worker drains the accounts' jobs.
    const wait = `bull:${queueKeyName(name, ON_CLUSTER)}:wait`;
    const lengths: number[] = [];
    let reading = true;
    const reader = (async () => {
      while (reading) {
        lengths.push(await shared.redis.llen(wait));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const worker = store.work({ accounts, concurrency: 4 });
    try {
      const counts = await until(
        () => store.counts(),
        (c) => c.delivered === sends,
        12_000,
      );
      expect(counts).toEqual({ ...EMPTY, delivered: sends });
    } finally {
      reading = false;
      await reader;
      await worker.close();
    }
    // Never more than twice the concurrency waiting. In between, the list goes from more than the
    // concurrency down to the concurrency or fewer and back, again and again: refilled in batches once
    // the concurrency's places are free (a refill of one job a place freed would keep it near full; a
    // list of at most the concurrency never goes above it).
    expect(Math.max(...lengths)).toBeLessThanOrEqual(8);
    let refills = 0;
    for (let i = 1; i < lengths.length; i++) {
      if ((lengths[i - 1] ?? 0) <= 4 && (lengths[i] ?? 0) > 4) refills++;
    }
    expect(refills).toBeGreaterThanOrEqual(5);
    const delivered = mock.accounts.flatMap((a) => a.deliveries.map((d) => String(d.items[0]?.msg)));
    expect(new Set(delivered).size).toBe(sends);
    expect(delivered).toHaveLength(sends);
  });

  it("a job of an account is the outbox's own record until its turn, with what BullMQ is given then; nothing of BullMQ's is written for it", async () => {
    const name = 'stored';
    outbox = createOutbox({ connection: { url: shared.server.url }, name, shards: 1 });
    const store = outbox;
    const params = { user_id: 'u-1', msg: 'hello' };
    // Inside a trace, so that its context is stored with each job (BullMQ's `tm`).
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    const span = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1 };
    try {
      await context.with(trace.setSpanContext(context.active(), span), async () => {
        await store.addMany([{ method: 'sendText', params, key: 'same' }]);
        await store.addMany([{ method: 'sendText', params, key: 'same', account: 'shop-1' }]);
      });
    } finally {
      context.disable();
    }
    const prefix = `bull:${queueKeyName(name, ON_CLUSTER)}:`;
    const plain = await shared.redis.hgetall(`${prefix}k-same`);
    // Nothing of BullMQ's is written for it until its turn: only the outbox's own record, under `oa:`.
    expect(await shared.redis.exists(`${prefix}a-shop-1/same`)).toBe(0);
    const parked = await shared.redis.hgetall(`${prefix}oa:job:a-shop-1/same`);
    expect(parked.name).toBe(plain.name);
    expect(JSON.parse(parked.data ?? '')).toEqual({ ...JSON.parse(plain.data ?? ''), account: 'shop-1' });
    // What BullMQ's `Queue.add` is given at its turn: the options the same job without an account got.
    const opts = JSON.parse(parked.opts ?? '');
    const plainOpts = JSON.parse(plain.opts ?? '');
    expect(opts).toMatchObject({ attempts: plainOpts.attempts, backoff: plainOpts.backoff });
    expect(opts.telemetry.metadata).toContain(span.traceId);
    const connection = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    const queue = new Queue(queueKeyName(name, ON_CLUSTER), { connection });
    try {
      expect(await queue.getJobState('a-shop-1/same')).toBe('unknown');
      // The plain job waits, and the queue's anchor (its delayed job) ties the outbox's records to it.
      expect(await queue.getJobCounts('wait', 'delayed')).toEqual({ wait: 1, delayed: 1 });
      expect((await queue.getJob('oa-anchor'))?.name).toBe('oa-outbox-anchor');
    } finally {
      await queue.close();
      await connection.quit();
    }
    expect(await store.get('same', { account: 'shop-1' })).toEqual({ state: 'waiting' });
    expect(await store.counts()).toEqual({ ...EMPTY, waiting: 2 });
    expect(await store.addMany([{ method: 'sendText', params, key: 'same', account: 'shop-1' }])).toEqual({
      added: 0,
      known: 1,
      knownKeys: ['same'],
    });
    // One chunk of jobs with and without an account, a key twice in it: known keys in the order given.
    const mixed = await store.addMany([
      { method: 'sendText', params, key: 'mix' },
      { method: 'sendText', params, key: 'dup', account: 'shop-1' },
      { method: 'sendText', params, key: 'same' },
      { method: 'sendText', params, key: 'dup', account: 'shop-1' },
      { method: 'sendText', params, key: 'dup', account: 'shop-2', delay: 60_000 },
    ]);
    expect(mixed).toEqual({ added: 3, known: 2, knownKeys: ['same', 'dup'] });
    expect(await store.get('dup', { account: 'shop-2' })).toEqual({ state: 'delayed' });
    expect(await store.counts()).toEqual({ ...EMPTY, waiting: 4, delayed: 1 });
  });

  it("waitFor('all') without an account is the jobs added without one; a cancel leaves nothing of a job of an account", async () => {
    const name = 'cancelled';
    outbox = createOutbox({ connection: { url: shared.server.url }, name, shards: 1 });
    const params = { user_id: 'u-1', msg: 'hello' };
    await outbox.addMany([
      { method: 'sendText', params, key: 'now', account: 'shop-1' },
      { method: 'sendText', params, key: 'later', account: 'shop-1', delay: 60_000 },
    ]);
    expect(await outbox.waitFor('all', { timeoutMs: 2000 })).toEqual(new Map());
    expect(await outbox.cancel('now', { account: 'shop-1' })).toEqual({ cancelled: true });
    expect(await outbox.cancel('later', { account: 'shop-1' })).toEqual({ cancelled: true });
    expect(await outbox.counts()).toEqual(EMPTY);
    const prefix = `bull:${queueKeyName(name, ON_CLUSTER)}:`;
    for (const key of ['oa:parked', 'oa:ready', 'oa:acct:shop-1:lane', 'oa:acct:shop-1:jobs']) {
      expect(await shared.redis.exists(`${prefix}${key}`), key).toBe(0);
    }
    // Added again, the key is a new job, waiting for its turn.
    expect(await outbox.add('sendText', params, { key: 'now', account: 'shop-1' })).toMatchObject({
      added: 1,
    });
    expect(await outbox.get('now', { account: 'shop-1' })).toEqual({ state: 'waiting' });
  });
});
