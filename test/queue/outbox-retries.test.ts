// Who retries what in an outbox, against a real redis-server and the fake API: the worker's client
// spends its own budget first; BullMQ runs the job again only when the client reports it was not sent,
// `attempts` times in all, later (a delayed job), never sooner than a 429's Retry-After.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient, type OARetryEvent } from '../../src/index.js';
import {
  createOutbox,
  type OutboxEventName,
  type OutboxEvents,
  type OutboxWorker,
} from '../../src/queue/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

type Seen = { [E in OutboxEventName]: [E, OutboxEvents[E], number] }[OutboxEventName];

describe.skipIf(!REDIS_SERVER)('outbox retries', () => {
  const shared = useRedisServer();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** A worker's events with when they came; `until(n)` fails after `ms`. */
  function watch(worker: Pick<OutboxWorker, 'on'>) {
    const seen: Seen[] = [];
    for (const name of ['delivered', 'retry', 'failed', 'unknown'] as const) {
      (worker.on as (n: OutboxEventName, l: (e: never) => void) => unknown)(name, (event: never) =>
        seen.push([name, event, Date.now()] as Seen),
      );
    }
    const until = async (n: number, ms = 20_000) => {
      const end = Date.now() + ms;
      while (seen.length < n) {
        if (Date.now() > end) throw new Error(`${seen.length} of ${n} events: ${JSON.stringify(seen)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      return seen;
    };
    return until;
  }

  it("a 429 whose Retry-After outlasts the client's wait budget is tried again after it, not sooner", async () => {
    const mock = await createMockServer();
    // The client would wait on a 429, but not 3 s: it gives up at once and reports it not sent.
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      maxBusyWaitMs: 500,
    });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'retry-after' });
    closing.push(
      () => mock.close(),
      () => client.close(),
      () => outbox.close(),
    );
    mock.injectFault(
      { kind: 'rate-limit', retryAfterSeconds: 3 },
      { path: '/webhook/broadcast-message', times: 1 },
    );
    await outbox.add('sendText', { user_id: 'u1', msg: 'later' }, { key: 'later' });
    const worker = outbox.work({ client });
    const seen = await watch(worker)(2);
    await worker.close();

    expect(seen.map(([name, e]) => `${name}@${e.attempt}`)).toEqual(['retry@1', 'delivered@2']);
    const [, retry, retriedAt] = seen[0] as ['retry', OutboxEvents['retry'], number];
    expect(retry.error).toMatchObject({ status: 429 });
    expect(retry.waitMs).toBeGreaterThanOrEqual(3000);
    // The API saw the second try no sooner than it asked.
    const sends = mock.requests.filter((r) => r.path.endsWith('/webhook/broadcast-message'));
    expect(sends).toHaveLength(2);
    expect((sends[1]?.at ?? 0) - (sends[0]?.at ?? 0)).toBeGreaterThanOrEqual(2900);
    expect((seen[1]?.[2] ?? 0) - retriedAt).toBeGreaterThanOrEqual(2500);
    expect(mock.deliveries).toHaveLength(1);
  });

  it('a send cut short by close() of its client while it waits (not sent) is run again later, not failed', async () => {
    const mock = await createMockServer();
    // The client waits out the 429 itself (within maxBusyWaitMs): it is closed during that wait.
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'closed-while-waiting' });
    closing.push(
      () => mock.close(),
      () => outbox.close(),
    );
    mock.injectFault(
      { kind: 'rate-limit', retryAfterSeconds: 5 },
      { path: '/webhook/broadcast-message', times: 1 },
    );
    await outbox.add('sendText', { user_id: 'u1', msg: 'after a restart' }, { key: 'restart' });
    const worker = outbox.work({ client });
    const until = watch(worker);
    // The first try was answered 429: the client is now waiting to retry.
    const start = Date.now();
    while (mock.requests.filter((r) => r.status === 429).length === 0) {
      if (Date.now() - start > 10_000) throw new Error('no 429 within 10 s');
      await new Promise((r) => setTimeout(r, 25));
    }
    // The fake logs the 429 as it answers: give the client time to read it and begin its 5 s wait, so
    // that close() does not cut the request itself short (that one would rightly be unknown).
    await new Promise((r) => setTimeout(r, 500));
    // A shutdown: the app closes its client, then its worker.
    await client.close();
    const [first] = await until(1);
    await worker.close();
    expect(first?.[0]).toBe('retry');
    expect((await outbox.get('restart'))?.state).toMatch(/^(waiting|delayed)$/);
    expect(mock.deliveries).toHaveLength(0);

    // Another process (a new client) sends it, once.
    const next = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    closing.push(() => next.close());
    const again = outbox.work({ client: next });
    closing.push(() => again.close());
    await watch(again)(1, 20_000);
    expect(await outbox.get('restart')).toEqual({ state: 'delivered', result: 'success' });
    expect(mock.deliveries).toHaveLength(1);
  }, 40_000);

  it("a refused connection: the client's own retries in each run, then BullMQ's `attempts` runs, then failed", async () => {
    const mock = await createMockServer();
    const url = mock.url;
    // Nothing listens there any more: every connection is refused.
    await mock.close();
    const client = new OAClient({ baseUrl: url, apiKey: 'key-1', apiSecret: 'secret-1', maxRetries: 1 });
    const clientRetries: OARetryEvent[] = [];
    client.on('retry', (event) => clientRetries.push(event));
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'refused', attempts: 2 });
    closing.push(
      () => client.close(),
      () => outbox.close(),
    );
    await outbox.add('sendText', { user_id: 'u1', msg: 'never' }, { key: 'refused' });
    const worker = outbox.work({ client });
    const seen = await watch(worker)(2);
    await worker.close();

    expect(seen.map(([name, e]) => `${name}@${e.attempt}`)).toEqual(['retry@1', 'failed@2']);
    expect(seen[1]?.[1]).toMatchObject({ error: { name: 'OAConnectionError' } });
    // One retry of the client's in each of the two runs: the budgets multiply, bounded by both.
    expect(clientRetries.map((r) => r.reason)).toEqual(['not_sent', 'not_sent']);
    expect(await outbox.get('refused')).toMatchObject({ state: 'failed' });
  });
});
