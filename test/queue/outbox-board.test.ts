// bull-board's adapters of an outbox (outboxBoardAdapters), against a real redis-server (and, in CI's
// cluster run, a Redis Cluster): one adapter per shard, and the jobs parked until their account's turn
// counted and listed (due ones under Waiting, the others under Delayed), which bull-board's own
// BullMQAdapter of the same queue neither counts nor lists. Nothing works the jobs: they stay parked.
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import type { QueueJob } from '@bull-board/api/dist/types.js';
import { type Job, Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { OAConfigError } from '../../src/index.js';
import { createOutbox, type Outbox, outboxBoardAdapters } from '../../src/queue/index.js';
import { ON_CLUSTER, REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';

const text = (account: string | undefined, key: string, delay?: number) => ({
  method: 'sendText' as const,
  params: { user_id: 'u', msg: key },
  key,
  ...(account === undefined ? {} : { account }),
  ...(delay === undefined ? {} : { delay }),
});

/** The ids of jobs an adapter listed (BullMQ jobs, which bull-board's own type does not name). */
const idsOf = (jobs: readonly QueueJob[]) => jobs.map((job) => String((job as unknown as Job).id));

describe.skipIf(!REDIS_SERVER)('outboxBoardAdapters', () => {
  const shared = useRedisServer();
  let outbox: Outbox | undefined;
  const closing: (() => Promise<unknown>)[] = [];

  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
    await outbox?.close();
    outbox = undefined;
  });

  it("counts and lists each account's parked jobs, in every shard, where BullMQ's adapter shows none", async () => {
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'board', shards: 2 });
    await outbox.addMany([
      text('shop-1', 'one'),
      text('shop-1', 'two'),
      text('shop-2', 'three'),
      text('shop-2', 'later', 3_600_000),
      text(undefined, 'plain'),
    ]);
    const adapters = outboxBoardAdapters(outbox);
    expect(adapters.map((adapter) => adapter.getName())).toEqual(
      ON_CLUSTER ? ['{board}', '{board#1}'] : ['board', 'board#1'],
    );

    const counts = await Promise.all(adapters.map((adapter) => adapter.getJobCounts()));
    const sum = (state: 'waiting' | 'delayed') => counts.reduce((n, c) => n + (c[state] ?? 0), 0);
    // Three parked and due, one BullMQ job without an account; one parked for later.
    expect([sum('waiting'), sum('delayed')]).toEqual([4, 1]);
    expect(await outbox.counts()).toMatchObject({ waiting: 4, delayed: 1 });

    const ids = async (status: 'waiting' | 'delayed', start?: number, end?: number) =>
      (await Promise.all(adapters.map((adapter) => adapter.getJobs([status], start, end))))
        .flatMap(idsOf)
        .sort();
    expect(await ids('waiting')).toEqual(['a-shop-1/one', 'a-shop-1/two', 'a-shop-2/three', 'k-plain']);
    expect(await ids('delayed')).toEqual(['a-shop-2/later']);

    // Paged as the board pages a tab: one job a page, BullMQ's first, then the parked ones, each once.
    const paged: string[] = [];
    for (const [i, adapter] of adapters.entries()) {
      const waiting = counts[i]?.waiting ?? 0;
      for (let page = 0; page < waiting + 1; page++) {
        paged.push(...idsOf(await adapter.getJobs(['waiting'], page, page)));
      }
    }
    expect(paged.sort()).toEqual(await ids('waiting'));

    // The board's "latest" (every status at once) includes them too.
    const latest = (
      await Promise.all(adapters.map((adapter) => adapter.getJobs(adapter.getJobStatuses(), 0, 9)))
    ).flat();
    expect(idsOf(latest).sort()).toEqual([...(await ids('waiting')), 'a-shop-2/later'].sort());

    // A parked job's page: BullMQ reads its hash as any job's.
    const job = await adapters
      .map((adapter) => adapter.getJob('a-shop-1/one'))
      .reduce(async (found, next) => (await found) ?? (await next));
    expect((job as Job | undefined)?.data).toMatchObject({
      method: 'sendText',
      account: 'shop-1',
      key: 'one',
    });

    // bull-board's own adapter of the same queues: none of the parked jobs, only the plain one.
    const connection = redisClient(shared.server.url);
    closing.push(() => connection.quit());
    const plain = adapters.map((adapter) => {
      const queue = new Queue(adapter.getName(), { connection });
      closing.push(() => queue.close());
      return new BullMQAdapter(queue);
    });
    const theirs = (await Promise.all(plain.map((adapter) => adapter.getJobs(['waiting'])))).flat();
    expect(idsOf(theirs)).toEqual(['k-plain']);
  });

  it('refuses anything but an outbox of createOutbox', () => {
    expect(() => outboxBoardAdapters({} as Outbox)).toThrow(OAConfigError);
  });
});
