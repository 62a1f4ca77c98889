// Order groups of an outbox with accounts (`add(..., { account, orderGroup })`), against a real
// redis-server and the fake OA server, a worker running 8 jobs at once: one group's jobs are sent one
// at a time in the order added, while other groups (and jobs without one) go at once; a job behind its
// group is `waiting`, can be cancelled, and a holder that fails or is cancelled lets the next one go.
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAValidationError } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { shardName } from '../../src/queue/outbox-shards.js';
import { queueKeyName } from '../../src/redis/keys.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { servedAccounts, texts } from '../accounts/support.js';
import { ON_CLUSTER, REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';

const SEND = '/webhook/broadcast-message';
const USERS = ['u1', 'u2', 'u3'];
const MESSAGES = 4;

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await done()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!REDIS_SERVER)('outbox order groups', () => {
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
    const served = servedAccounts(2);
    mock = await createMockServer({ accounts: served, rateLimit: false });
    accounts = createAccounts({
      credentials: (account) => served.find((a) => a.username === account),
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'order' });
    return { mock, accounts, outbox };
  };

  /** Each user's replies of `account` (`<user> m<n>`), user after user, with or without their order group. */
  const replies = (account: string, ordered: boolean): OutboxEntry[] =>
    USERS.flatMap((user) =>
      Array.from({ length: MESSAGES }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: user, msg: `${user} m${i + 1}` },
        key: `${user}-${i + 1}`,
        account,
        ...(ordered ? { orderGroup: user } : {}),
      })),
    );
  const expected = (user: string) => Array.from({ length: MESSAGES }, (_, i) => `${user} m${i + 1}`);
  const of = (all: string[], user: string) => all.filter((t) => t.startsWith(`${user} `));

  it("sends one group's jobs one at a time, in the order added; other groups do not wait for it", async () => {
    const { mock, accounts, outbox } = await open();
    // The first send is slow, the others quick: a job sent beside it would arrive before it.
    mock.injectFault({ kind: 'delay', delayMs: 600 }, { path: SEND, times: 1 });
    mock.injectFault({ kind: 'delay', delayMs: 50 }, { path: SEND, times: Number.POSITIVE_INFINITY });
    // One `add` a reply, as a bot adds them, in both accounts.
    for (const entry of [...replies('shop-1', true), ...replies('shop-2', true)]) {
      const { method, params, ...options } = entry;
      await outbox.add(method, params as never, options);
    }
    const worker = outbox.work({ accounts, concurrency: 8 });
    try {
      const total = 2 * USERS.length * MESSAGES;
      // Every account's deliveries (the fake's own `deliveries` are its first account's).
      expect(await until(() => mock.accounts.reduce((n, a) => n + a.deliveries.length, 0) >= total)).toBe(
        true,
      );
      for (const account of ['shop-1', 'shop-2']) {
        const sent = texts(mock, account);
        for (const user of USERS) expect(of(sent, user), `${account} ${user}`).toEqual(expected(user));
      }
      // The slow send (the first to reach the fake) held its own group only: while it was held, the
      // other groups of its account went on.
      const slow = mock.requests.reduce((a, b) => ((b.durationMs ?? 0) > (a?.durationMs ?? 0) ? b : a));
      const body = JSON.stringify(slow.body);
      const account = mock.accounts.find((a) => texts(mock, a.username).some((t) => body.includes(`"${t}"`)));
      const sent = texts(mock, account?.username ?? '');
      const slowText = sent.find((t) => body.includes(`"${t}"`)) ?? '';
      expect(sent.indexOf(slowText), `${slowText}: ${sent}`).toBeGreaterThanOrEqual(USERS.length);
      expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ delivered: 12, waiting: 0 });
    } finally {
      await worker.close();
    }
  });

  it('without orderGroup, jobs of one user are still sent at once (the order is not kept)', async () => {
    const { mock, accounts, outbox } = await open();
    mock.injectFault({ kind: 'delay', delayMs: 600 }, { path: SEND, times: 1 });
    mock.injectFault({ kind: 'delay', delayMs: 50 }, { path: SEND, times: Number.POSITIVE_INFINITY });
    await outbox.addMany(replies('shop-1', false));
    const worker = outbox.work({ accounts, concurrency: 8 });
    try {
      expect(await until(() => texts(mock, 'shop-1').length >= USERS.length * MESSAGES)).toBe(true);
      // The first send to reach the fake (one of u1's first three, admitted together) was slow, and
      // u1's others, sent beside it, overtook it.
      const sent = of(texts(mock, 'shop-1'), 'u1');
      expect(sent).not.toEqual(expected('u1'));
      expect([...sent].sort()).toEqual(expected('u1'));
    } finally {
      await worker.close();
    }
  });

  it('a job behind its group is waiting and can be cancelled; a holder that fails or is cancelled lets the next go', async () => {
    const { mock, accounts, outbox } = await open();
    await outbox.addMany(replies('shop-1', true));
    // Behind u1's first reply: waiting, for get and counts.
    expect(await outbox.get('u1-2', { account: 'shop-1' })).toEqual({ state: 'waiting' });
    expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({ waiting: 12 });
    // A holder cancelled (u2's first, in its lane), and a job behind its holder (u1's third).
    expect(await outbox.cancel('u2-1', { account: 'shop-1' })).toEqual({ cancelled: true });
    expect(await outbox.cancel('u1-3', { account: 'shop-1' })).toEqual({ cancelled: true });
    expect(await outbox.get('u1-3', { account: 'shop-1' })).toBeUndefined();
    // u3's first send is refused for good (400): failed, and u3's next ones still go.
    mock.injectFault({ kind: 'error', status: 400, code: 'INVALID_PARAM' }, { path: SEND, times: 1 });
    const worker = outbox.work({ accounts, concurrency: 8 });
    try {
      await outbox.waitFor('all', { account: 'shop-1', timeoutMs: 15_000 });
      // Whichever holder's send reached the fake first was refused; every other reply went, in order.
      const sent = texts(mock, 'shop-1');
      const left: Record<string, string[]> = {
        u1: ['u1 m1', 'u1 m2', 'u1 m4'],
        u2: ['u2 m2', 'u2 m3', 'u2 m4'],
        u3: expected('u3'),
      };
      for (const user of USERS) {
        const got = of(sent, user);
        const all = left[user] as string[];
        expect(got, user).toEqual(all.slice(all.length - got.length));
      }
      expect(sent).toHaveLength(9);
      expect(await outbox.counts({ account: 'shop-1' })).toMatchObject({
        delivered: 9,
        failed: 1,
        waiting: 0,
      });
    } finally {
      await worker.close();
    }
  });

  it("a holder that ends without its worker telling (removed by BullMQ's own API while it waits out a retry) lets the next go", async () => {
    const { mock, accounts, outbox } = await open();
    await outbox.addMany(replies('shop-1', true).filter((e) => e.key.startsWith('u1-')));
    // u1's first send is not sent (a 429): its job waits out its backoff in BullMQ's delayed set.
    mock.injectFault({ kind: 'rate-limit', retryAfterSeconds: 3 }, { path: SEND, times: 1 });
    const worker = outbox.work({ accounts, concurrency: 8 });
    const connection = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    // Its account's queue: on a Redis Cluster, one of the outbox's 8 shards.
    const queues = (ON_CLUSTER ? Array.from({ length: 8 }, (_, i) => shardName('order', i)) : ['order']).map(
      (name) => new Queue(queueKeyName(name, ON_CLUSTER), { connection }),
    );
    try {
      expect(
        await until(async () => (await outbox.get('u1-1', { account: 'shop-1' }))?.state === 'delayed'),
      ).toBe(true);
      expect(await outbox.get('u1-2', { account: 'shop-1' })).toEqual({ state: 'waiting' });
      // Removed with BullMQ's own API: no worker tells its end; the dispatch loop finds it gone.
      let removed = 0;
      for (const queue of queues) {
        if (await queue.getJob('a-shop-1/u1-1')) removed += await queue.remove('a-shop-1/u1-1');
      }
      expect(removed).toBe(1);
      expect(await until(() => texts(mock, 'shop-1').length >= 3, 10_000)).toBe(true);
      expect(texts(mock, 'shop-1')).toEqual(['u1 m2', 'u1 m3', 'u1 m4']);
    } finally {
      await worker.close();
      await Promise.all(queues.map((queue) => queue.close()));
      await connection.quit();
    }
  });

  it('is refused without account, or as anything but a non-empty string', async () => {
    const { outbox } = await open();
    const params = { user_id: 'u', msg: 'hi' };
    await expect(outbox.add('sendText', params, { key: 'k', orderGroup: 'u' })).rejects.toThrow(
      /orderGroup: needs account/,
    );
    await expect(
      outbox.add('sendText', params, { key: 'k', account: 'shop-1', orderGroup: '' }),
    ).rejects.toThrow(OAValidationError);
    await expect(
      outbox.add('sendText', params, { key: 'k', account: 'shop-1', orderGroup: 7 as never }),
    ).rejects.toThrow(/orderGroup/);
  });
});
