// The inbox's `order: 'sender'` in one process, against a real redis-server: one sender's events one at
// a time and in the OA's order, two senders in parallel, a redelivery stored once, a failing handler
// retried in place then dead-lettered while the sender's next event waits for it.
import { afterEach, describe, expect, it } from 'vitest';
import { OAConnectionError } from '../../src/index.js';
import { createInbox, type Inbox } from '../../src/queue/index.js';
import { isMessageEvent, type WebhookEvent } from '../../src/webhook/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { eventWith } from '../webhook/support.js';

const message = (from: string, seq: number, extra: Record<string, unknown> = {}) =>
  eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: `${from} ${seq}` } }], seq, {
    From_Account: from,
    ...extra,
  }) as WebhookEvent;

const label = (event: WebhookEvent) =>
  isMessageEvent(event) ? `${event.data.From_Account} ${event.data.MsgSeq}` : 'other';

async function until(done: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await done()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!REDIS_SERVER)("inbox order: 'sender'", () => {
  const shared = useRedisServer();
  let inbox: Inbox | undefined;

  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  const open = (name: string, extra: { attempts?: number } = {}) => {
    inbox = createInbox({ connection: { url: shared.server.url }, name, order: 'sender', ...extra });
    return inbox;
  };

  it('refuses an order it does not know', () => {
    expect(() => createInbox({ connection: { url: shared.server.url }, order: 'user' as never })).toThrow(
      /order must be 'none' or 'sender'/,
    );
  });

  it("one sender's second event starts only after the first ended; two senders run in parallel", async () => {
    const box = open('one-at-a-time');
    const log: string[] = [];
    let running = 0;
    let most = 0;
    const worker = box.work(
      async (event) => {
        const what = label(event);
        running++;
        most = Math.max(most, running);
        log.push(`start ${what}`);
        // The first event of each sender ends only once both have started (within 5 s): they can only
        // if the two senders run in parallel.
        if (what.endsWith(' 1'))
          await until(() => log.includes('start alice 1') && log.includes('start bob 1'), 5000);
        else await pause(20);
        log.push(`end ${what}`);
        running--;
      },
      { concurrency: 4 },
    );
    await box.store(message('alice', 1));
    await box.store(message('alice', 2));
    await box.store(message('bob', 1));
    await box.store(message('bob', 2));
    await until(() => log.filter((l) => l.startsWith('end')).length === 4);
    await worker.close();
    for (const from of ['alice', 'bob']) {
      const own = log.filter((l) => l.endsWith(`${from} 1`) || l.endsWith(`${from} 2`));
      expect(own).toEqual([`start ${from} 1`, `end ${from} 1`, `start ${from} 2`, `end ${from} 2`]);
    }
    // alice's and bob's slow first events overlapped.
    expect(most).toBe(2);
    expect(log.indexOf('start bob 1')).toBeLessThan(log.indexOf('end alice 1'));
  });

  it('events stored out of MsgSeq order are handled in MsgSeq order, MsgTime first', async () => {
    const box = open('sorted');
    // MsgTime outranks MsgSeq: seq 9 was sent a second before the others.
    for (const [seq, time] of [
      [3, 1557481126],
      [1, 1557481126],
      [9, 1557481125],
      [2, 1557481126],
    ] as const) {
      await box.store(message('carol', seq, { MsgTime: time }));
    }
    const seen: string[] = [];
    const worker = box.work(
      (event) => {
        seen.push(label(event));
      },
      { concurrency: 4 },
    );
    await until(() => seen.length === 4);
    await worker.close();
    expect(seen).toEqual(['carol 9', 'carol 1', 'carol 2', 'carol 3']);
  });

  it('a redelivery is stored once, before and after it was handled', async () => {
    const box = open('redelivered');
    await box.store(message('dave', 1));
    await box.store(message('dave', 1));
    expect(await shared.redis.zcard('bull:redelivered:oa:{/dave}:pending')).toBe(0);
    expect(await shared.redis.zcard('bull:redelivered:oa:{oa_shop/dave}:pending')).toBe(1);
    const seen: string[] = [];
    const worker = box.work((event) => {
      seen.push(label(event));
    });
    await until(() => seen.length === 1);
    await box.store(message('dave', 1));
    await box.store(message('dave', 2));
    await until(() => seen.length === 2);
    await pause(300);
    await worker.close();
    expect(seen).toEqual(['dave 1', 'dave 2']);
  });

  it('a failing handler is retried in place, then dead-lettered; the next event of the sender waits for it', async () => {
    const box = open('failing', { attempts: 2 });
    await box.store(message('erin', 1));
    await box.store(message('erin', 2));
    const log: string[] = [];
    const worker = box.work(
      (event) => {
        const what = label(event);
        log.push(`${what} at ${Date.now()}`);
        if (what === 'erin 1') throw new Error('cannot process');
      },
      { concurrency: 4 },
    );
    await until(() => log.some((l) => l.startsWith('erin 2')));
    await worker.close();
    expect(log.map((l) => l.split(' at ')[0])).toEqual(['erin 1', 'erin 1', 'erin 2']);
    const at = log.map((l) => Number(l.split(' at ')[1]));
    // Retried after 1 s; the second event only once the first was given up.
    expect((at[1] ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(900);
    // The dead letter: a waiting job of `failing-dead`, the event as data, the error in its log.
    const ids = await shared.redis.lrange('bull:failing-dead:wait', 0, -1);
    expect(ids).toHaveLength(1);
    const data = JSON.parse((await shared.redis.hget(`bull:failing-dead:${ids[0]}`, 'data')) ?? '{}');
    expect(label(data)).toBe('erin 1');
    const logs = await shared.redis.lrange(`bull:failing-dead:${ids[0]}:logs`, 0, -1);
    expect(logs[0]).toMatch(/failed 2 times: Error: cannot process/);
    // Nothing left pending, the lock released, no turn failed.
    expect(await shared.redis.zcard('bull:failing:oa:{oa_shop/erin}:pending')).toBe(0);
    expect(await shared.redis.exists('bull:failing:oa:{oa_shop/erin}:lock')).toBe(0);
    expect(await shared.redis.zcard('bull:failing:failed')).toBe(0);
  });

  it('an event without a sender is handled as a job of its own', async () => {
    const box = open('other');
    await box.store({ event_type: 'follow', data: { user: 'x' } } as WebhookEvent);
    const seen: WebhookEvent[] = [];
    const worker = box.work((event) => {
      seen.push(event);
    });
    await until(() => seen.length === 1);
    await worker.close();
    expect(seen).toEqual([expect.objectContaining({ event_type: 'follow' })]);
  });

  it('a store while Redis is gone rejects with OAConnectionError in bounded time, and works once it is back', async () => {
    const box = open('down');
    await box.store(message('frank', 1));
    // The test's own connection reconnects by itself.
    shared.redis.on('error', () => {});
    await shared.server.shutdown();
    try {
      const started = Date.now();
      const error = await box.store(message('frank', 2)).then(
        () => 'resolved',
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OAConnectionError);
      expect(Date.now() - started).toBeLessThan(8000);
    } finally {
      await shared.server.start();
    }
    await until(async () => {
      try {
        await box.store(message('frank', 3));
        return true;
      } catch {
        return false;
      }
    });
    expect(await shared.redis.zcard('bull:down:oa:{oa_shop/frank}:pending')).toBe(1);
  });
});
