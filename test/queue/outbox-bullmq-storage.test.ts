// The outbox uses BullMQ through its public API only, against a real redis-server (and, in CI's
// cluster run, a Redis Cluster) and the fake OA server: every Redis command of a representative
// workload is recorded (MONITOR) and each write is attributed to a script of BullMQ's or to the SDK's;
// no write of the SDK touches a key BullMQ owns. And BullMQ's own maintenance keeps its meaning on an
// outbox queue: after `obliterate()` none of its jobs is sent and `counts()` is 0; `clean()` and
// `removeOrphanedJobs()` never delete a job still to be sent; `Queue.drain()` leaves the jobs waiting
// for their account's turn (the outbox's own records), `outbox.drain()` removes them.
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAClient } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { queueKeyName } from '../../src/redis/keys.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { accountStore, servedAccounts } from '../accounts/support.js';
import { ON_CLUSTER, REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';

const EMPTY = { waiting: 0, delayed: 0, active: 0, delivered: 0, failed: 0, unknown: 0 };

const sends = (
  n: number,
  prefix: string,
  extra: { account?: string; bulk?: boolean; orderGroup?: string; delay?: number } = {},
): OutboxEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    method: 'sendText' as const,
    params: { user_id: 'u', msg: `${prefix}${i}` },
    key: `${prefix}${i}`,
    ...extra,
  }));

/** Redis's commands that write, lower-case. */
const WRITES = new Set(
  (
    'set setnx setex psetex getset getdel getex append incr incrby incrbyfloat decr decrby del unlink ' +
    'expire pexpire expireat pexpireat persist rename renamenx copy move hset hsetnx hmset hdel hincrby ' +
    'hincrbyfloat lpush rpush lpushx rpushx lpop rpop lrem ltrim lset linsert lmove blmove rpoplpush ' +
    'brpoplpush blpop brpop sadd srem spop smove zadd zincrby zrem zremrangebyscore zremrangebyrank ' +
    'zremrangebylex zpopmin zpopmax bzpopmin bzpopmax zunionstore zinterstore zrangestore xadd xtrim xdel ' +
    'xgroup xack xclaim xautoclaim xsetid'
  ).split(' '),
);

/** A script's text with only its letters and digits: MONITOR shows an EVAL's script escaped. */
const bare = (text: string) => text.replace(/[^A-Za-z0-9]/g, '');

/**
 * The SHA-1s of BullMQ's own scripts (what ioredis runs with EVALSHA) and their bare texts (for the
 * EVAL that follows a NOSCRIPT), from the installed bullmq.
 */
async function bullmqScripts(): Promise<Set<string>> {
  const require = createRequire(import.meta.url);
  const dir = join(dirname(require.resolve('bullmq')), 'scripts');
  const shas = new Set<string>();
  for (const file of await readdir(dir)) {
    if (!file.endsWith('.js') || file === 'index.js') continue;
    const module = (await import(join(dir, file))) as Record<string, { content?: unknown }>;
    for (const value of Object.values(module)) {
      if (typeof value?.content === 'string') {
        shas.add(createHash('sha1').update(value.content).digest('hex'));
        shas.add(bare(value.content));
      }
    }
  }
  return shas;
}

/** One command as MONITOR shows it: its arguments, and whether a script ran it. */
type Seen = { args: string[]; lua: boolean };

describe.skipIf(!REDIS_SERVER)("the outbox and BullMQ's storage", () => {
  const shared = useRedisServer();
  let outbox: Outbox | undefined;
  let accounts: OAAccounts | undefined;
  let mock: MockServer | undefined;
  let client: OAClient | undefined;
  const closing: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    for (const close of closing.splice(0)) await close().catch(() => {});
    await outbox?.close();
    await accounts?.close();
    await client?.close();
    await mock?.close();
    outbox = accounts = mock = client = undefined;
  });

  async function open(name: string) {
    const served = servedAccounts(2);
    mock = await createMockServer({ accounts: served, rateLimit: false });
    accounts = createAccounts({
      credentials: accountStore(served).credentials,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    const first = served[0] as { apiKey: string; apiSecret: string };
    client = new OAClient({
      baseUrl: mock.url,
      apiKey: first.apiKey,
      apiSecret: first.apiSecret,
      maxRetries: 0,
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name, shards: 1 });
    const connection = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    const queue = new Queue(queueKeyName(name, ON_CLUSTER), { connection });
    closing.push(
      () => queue.close(),
      () => connection.quit(),
    );
    return { mock, accounts, client, outbox, queue };
  }

  /** Everything delivered by the fake, as the texts sent. */
  const sent = (m: MockServer) => m.accounts.flatMap((a) => a.deliveries.map((d) => String(d.items[0]?.msg)));

  // On a Redis Cluster, MONITOR on every master: each node's commands in their order there.
  it("no write of the SDK touches a key BullMQ owns: each write to one is BullMQ's own script's", {
    timeout: 60_000,
  }, async () => {
    const name = 'monitored';
    const prefix = `bull:${queueKeyName(name, ON_CLUSTER)}:`;
    const bullmq = await bullmqScripts();
    const redis = shared.redis as Redis | Cluster;
    const nodes = 'nodes' in redis ? redis.nodes('master') : [redis];
    const monitors = await Promise.all(nodes.map(async (node) => (await node.monitor()) as Redis));
    closing.push(async () => {
      for (const monitor of monitors) monitor.disconnect();
    });
    const feeds = monitors.map((monitor) => {
      const seen: Seen[] = [];
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        seen.push({ args: args.map(String), lua: source === 'lua' });
      });
      return seen;
    });
    const { mock, accounts, client, outbox } = await open(name);
    const heard: string[] = [];
    outbox.on('delivered', (e) => heard.push(e.key));
    // A representative workload: jobs with and without an account, a campaign, an order group, a
    // delay, a 429 tried again, a pause and a resume, cancels of a parked and of a waiting job, reads.
    mock.injectFault({ kind: 'rate-limit' }, { path: '/webhook/broadcast-message', times: 1 });
    await outbox.addMany([
      ...sends(3, 'plain'),
      ...sends(3, 'a', { account: 'shop-1' }),
      ...sends(3, 'b', { account: 'shop-2', bulk: true }),
      ...sends(2, 'g', { account: 'shop-1', orderGroup: 'user-1' }),
      ...sends(1, 'late', { account: 'shop-2', delay: 300 }),
      ...sends(1, 'later', { delay: 300 }),
      ...sends(1, 'gone', { account: 'shop-2', delay: 60_000 }),
      ...sends(1, 'gone-plain', { delay: 60_000 }),
    ]);
    await outbox.add('sendText', { user_id: 'u', msg: 'one' }, { key: 'one', account: 'shop-1' });
    expect(await outbox.cancel('gone0', { account: 'shop-2' })).toEqual({ cancelled: true });
    expect(await outbox.cancel('gone-plain0')).toEqual({ cancelled: true });
    await outbox.pause({ account: 'shop-2' });
    const worker = outbox.work({ accounts, client, concurrency: 3 });
    closing.push(() => worker.close());
    await outbox.waitFor(['a0', 'a1', 'a2', 'g0', 'g1', 'one'], { account: 'shop-1', timeoutMs: 20_000 });
    await outbox.resume({ account: 'shop-2' });
    await outbox.waitFor(['b0', 'b1', 'b2', 'late0'], { account: 'shop-2', timeoutMs: 20_000 });
    await outbox.waitFor(['plain0', 'plain1', 'plain2', 'later0'], { timeoutMs: 20_000 });
    await outbox.get('a0', { account: 'shop-1' });
    await outbox.counts();
    await outbox.accounts();
    await outbox.drain();
    await worker.close();
    expect(sent(mock).sort()).toEqual(
      [
        'a0',
        'a1',
        'a2',
        'b0',
        'b1',
        'b2',
        'g0',
        'g1',
        'late0',
        'later0',
        'one',
        'plain0',
        'plain1',
        'plain2',
      ].sort(),
    );
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(14);
    for (const monitor of monitors) monitor.disconnect();
    const seen = feeds.flatMap((feed) => [...feed, { args: ['--'], lua: false }]);

    // Each command inside a script follows the EVAL/EVALSHA that ran it (a script runs alone).
    const theirs: string[] = [];
    const ours: string[] = [];
    const wrong: string[] = [];
    let script: 'bullmq' | 'sdk' | undefined;
    for (const { args, lua } of seen) {
      const command = (args[0] ?? '').toLowerCase();
      if (!lua) {
        script = undefined;
        if (command === 'evalsha' || command === 'eval') {
          // An EVAL's script (after a NOSCRIPT) as MONITOR shows it: escaped (a newline as two characters).
          const body = (args[1] ?? '').replace(/\\(x[0-9a-f]{2}|.)/gi, '');
          script = bullmq.has(command === 'eval' ? bare(body) : (args[1] ?? '')) ? 'bullmq' : 'sdk';
          continue;
        }
      }
      if (!WRITES.has(command)) continue;
      const key = args[1] ?? '';
      const bullmqKey = key.startsWith(prefix) && !key.startsWith(`${prefix}oa:`);
      const line = `${lua ? `[${script} script] ` : ''}${args.slice(0, 4).join(' ')}`;
      if (lua && script === 'bullmq') {
        if (bullmqKey) theirs.push(line);
        continue;
      }
      if (lua) ours.push(line);
      // BullMQ's own plain writes: a Queue made writes its version in its meta hash, and a worker waits
      // for jobs by popping its marker. (The SDK's plain writes are to its own keys: its events.)
      if (!lua && command === 'hset' && key === `${prefix}meta`) continue;
      if (!lua && command === 'bzpopmin' && key === `${prefix}marker`) continue;
      if (bullmqKey) wrong.push(line);
    }
    // The workload did reach both: BullMQ wrote its keys, the SDK its own.
    expect(theirs.length).toBeGreaterThan(50);
    expect(ours.some((line) => line.includes(`${prefix}oa:job:`))).toBe(true);
    expect(
      ours.some((line) => line.includes(`${prefix}oa:events`)) ||
        seen.some((s) => s.args.includes(`${prefix}oa:events`)),
    ).toBe(true);
    expect(wrong).toEqual([]);
  });

  it('after BullMQ obliterates an outbox queue none of its jobs is sent and counts() is 0; the outbox goes on', {
    timeout: 30_000,
  }, async () => {
    const { mock, accounts, client, outbox, queue } = await open('obliterated');
    await outbox.addMany([
      ...sends(6, 'a', { account: 'shop-1' }),
      ...sends(6, 'b', { account: 'shop-2', bulk: true }),
      ...sends(3, 'g', { account: 'shop-1', orderGroup: 'user-1' }),
      ...sends(3, 'plain'),
    ]);
    expect(await outbox.counts()).toEqual({ ...EMPTY, waiting: 18 });
    await queue.pause();
    await queue.obliterate({ force: true });
    expect(await outbox.counts()).toEqual(EMPTY);
    expect(await outbox.accounts()).toEqual([]);
    expect(await outbox.get('a0', { account: 'shop-1' })).toBeUndefined();
    const worker = outbox.work({ accounts, client, concurrency: 4 });
    closing.push(() => worker.close());
    // Time for the worker to have sent them, had they been kept.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(sent(mock)).toEqual([]);
    expect(await outbox.counts()).toEqual(EMPTY);
    // The same keys added again are new jobs, and are sent.
    await outbox.addMany([...sends(1, 'a', { account: 'shop-1' }), ...sends(1, 'plain')]);
    await outbox.waitFor(['a0'], { account: 'shop-1', timeoutMs: 10_000 });
    await outbox.waitFor(['plain0'], { timeoutMs: 10_000 });
    expect(sent(mock).sort()).toEqual(['a0', 'plain0']);
  });

  it('clean() and removeOrphanedJobs() never delete a job still to be sent; Queue.drain() leaves those waiting for their turn, outbox.drain() removes them', {
    timeout: 30_000,
  }, async () => {
    const { mock, accounts, client, outbox, queue } = await open('maintained');
    await outbox.addMany([...sends(2, 'done', { account: 'shop-1' }), ...sends(1, 'done-plain')]);
    const worker = outbox.work({ accounts, client });
    await outbox.waitFor(['done0', 'done1'], { account: 'shop-1', timeoutMs: 10_000 });
    await outbox.waitFor(['done-plain0'], { timeoutMs: 10_000 });
    await worker.close();
    await outbox.addMany([
      ...sends(3, 'a', { account: 'shop-1' }),
      ...sends(2, 'd', { account: 'shop-2', delay: 60_000 }),
      ...sends(2, 'plain'),
    ]);
    // BullMQ's maintenance of ended jobs, and of every kind with no grace at all.
    for (const type of ['completed', 'failed', 'wait', 'delayed', 'prioritized'] as const) {
      if (type === 'wait') continue;
      await queue.clean(0, 0, type);
    }
    await queue.removeOrphanedJobs();
    expect(await outbox.counts()).toMatchObject({ waiting: 5, delayed: 2 });
    // BullMQ's drain removes what BullMQ holds (the plain jobs waiting); the outbox's records stay.
    await queue.drain();
    expect(await outbox.counts()).toMatchObject({ waiting: 3, delayed: 2 });
    const again = outbox.work({ accounts, client });
    closing.push(() => again.close());
    await outbox.waitFor(['a0', 'a1', 'a2'], { account: 'shop-1', timeoutMs: 10_000 });
    expect(sent(mock).sort()).toEqual(['a0', 'a1', 'a2', 'done-plain0', 'done0', 'done1']);
    // outbox.drain() removes the rest, those waiting for their turn included.
    expect(await outbox.drain()).toEqual({ cancelled: 2 });
    expect(await outbox.counts()).toMatchObject({ waiting: 0, delayed: 0 });
  });
});
