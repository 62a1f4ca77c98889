// The outbox's events against a real redis-server and the fake API: a worker's own listeners, and
// `outbox.on` in another process than the worker's, each told every outcome once its state is stored.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient, OAConfigError } from '../../src/index.js';
import {
  createOutbox,
  type Outbox,
  type OutboxEventName,
  type OutboxEvents,
  type OutboxWorker,
} from '../../src/queue/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';
import type { OutboxWorkerConfig } from './outbox-worker.js';
import { kill, type Running, startScript } from './processes.js';

type Seen = { [E in OutboxEventName]: [E, OutboxEvents[E]] }[OutboxEventName];

/** Collects the events of `source`; `until(n)` resolves once `n` came (or fails after `ms`). */
function collect(source: Pick<Outbox, 'on'> | Pick<OutboxWorker, 'on'>, onEach?: (seen: Seen) => unknown) {
  const seen: Seen[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  for (const name of ['delivered', 'retry', 'failed', 'unknown'] as const) {
    (source.on as (n: OutboxEventName, l: (e: never) => void) => unknown)(name, (event: never) => {
      const entry = [name, event] as Seen;
      seen.push(entry);
      onEach?.(entry);
      for (const w of waiters) if (seen.length >= w.n) w.resolve();
    });
  }
  const until = (n: number, ms = 20_000) =>
    new Promise<Seen[]>((resolve, reject) => {
      if (seen.length >= n) return resolve(seen);
      const timer = setTimeout(
        () => reject(new Error(`${seen.length} of ${n} events: ${JSON.stringify(seen)}`)),
        ms,
      );
      waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve(seen);
        },
      });
    });
  return { seen, until };
}

describe.skipIf(!REDIS_SERVER)('outbox events', () => {
  const shared = useRedisServer();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  const open = async (options: { name?: string; attempts?: number } = {}) => {
    const mock = await createMockServer();
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      maxRetries: 0,
    });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'events', ...options });
    closing.push(
      () => mock.close(),
      () => client.close(),
      () => outbox.close(),
    );
    return { mock, client, outbox };
  };

  it("a worker's listeners hear each outcome once the job's state is stored", async () => {
    const { mock, client, outbox } = await open();
    mock.injectFault({ kind: 'rate-limit' }, { path: '/webhook/broadcast-message', times: 1 });
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'retried' });
    await outbox.add('sendGreeting', { user_id: 'u2' }, { key: 'greeted' });
    await outbox.add('sendText', { user_id: 'u1', msg: 'y' }, { key: 'was-in-flight' });
    await shared.redis.hset(
      'bull:events:oa:job:k-was-in-flight',
      'sent',
      JSON.stringify({ token: 't', pid: 7, host: 'h', at: 1 }),
    );
    const states: Record<string, string | undefined> = {};
    const worker = outbox.work({ client });
    const { until } = collect(worker, ([, event]) =>
      outbox.get(event.key).then((s) => {
        states[`${event.key}@${event.attempt}`] = s?.state;
      }),
    );
    const seen = await until(4);
    await worker.close();

    const byKey = (key: string) => seen.filter(([, e]) => e.key === key);
    expect(byKey('greeted')).toEqual([
      ['delivered', { key: 'greeted', method: 'sendGreeting', attempt: 1, result: expect.anything() }],
    ]);
    expect(byKey('was-in-flight')).toEqual([
      [
        'unknown',
        {
          key: 'was-in-flight',
          method: 'sendText',
          attempt: 1,
          error: expect.objectContaining({
            deliveryUnknown: true,
            record: expect.objectContaining({ pid: 7 }),
          }),
        },
      ],
    ]);
    // The 429 came on whichever text went first; 'was-in-flight' never reaches the API.
    const retried = byKey('retried');
    expect(retried.map(([name]) => name)).toEqual(['retry', 'delivered']);
    expect(retried[0]?.[1]).toMatchObject({
      method: 'sendText',
      attempt: 1,
      waitMs: 1000,
      error: { status: 429, name: 'OARateLimitError' },
    });
    expect(retried[1]?.[1]).toEqual({ key: 'retried', method: 'sendText', attempt: 2, result: 'success' });
    // Each listener read the state its event told of.
    await expect.poll(() => Object.keys(states).length).toBe(4);
    expect(states).toEqual({
      'greeted@1': 'delivered',
      'was-in-flight@1': 'unknown',
      'retried@1': 'delayed',
      'retried@2': 'delivered',
    });
  });

  it('a final failure is one failed event with the error kept; a listener that throws changes nothing', async () => {
    const { mock, client, outbox } = await open();
    mock.injectFault(
      { kind: 'error', status: 400, code: 'BAD_REQUEST' },
      { path: '/webhook/broadcast-message' },
    );
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'bad' });
    const worker = outbox.work({ client });
    worker.on('failed', () => {
      throw new Error('listener bug');
    });
    const { until } = collect(worker);
    const [[name, event]] = (await until(1)) as [Seen];
    await worker.close();
    expect(name).toBe('failed');
    expect(event).toMatchObject({
      key: 'bad',
      attempt: 1,
      error: { status: 400, name: 'OABadRequestError' },
    });
    expect((await outbox.get('bad'))?.error).toEqual((event as OutboxEvents['failed']).error);
  });

  it('outbox.on hears the outcomes of a worker in another process', async () => {
    const mock = await createMockServer();
    closing.push(() => mock.close());
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'far' });
    closing.push(() => outbox.close());
    const { seen, until } = collect(outbox);
    const config: OutboxWorkerConfig = {
      redisUrl: shared.server.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      name: 'far',
      concurrency: 2,
      lockDurationMs: 30_000,
      rateLimit: { general: { max: 100, windowMs: 1000 }, upload: { max: 10, windowMs: 1000 } },
    };
    const child: Running = await startScript('test/queue/outbox-worker.ts', [JSON.stringify(config)]);
    closing.push(() => kill(child));
    await outbox.addMany(
      Array.from({ length: 20 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: `u${i}`, msg: `m${i}` },
        key: `far-${i}`,
      })),
    );
    await until(20, 30_000);
    expect(seen.map(([name]) => name)).toEqual(Array(20).fill('delivered'));
    expect(new Set(seen.map(([, e]) => e.key)).size).toBe(20);
    expect(mock.deliveries).toHaveLength(20);
  }, 60_000);

  it('outbox.on tells an outcome once when the stream holds it twice (a write re-sent after a reconnect)', async () => {
    const { client, outbox } = await open({ name: 'twice' });
    const { seen, until } = collect(outbox);
    const worker = outbox.work({ client });
    closing.push(() => worker.close());
    await outbox.add('sendText', { user_id: 'u1', msg: 'once' }, { key: 'once' });
    await until(1);
    // What a client re-sending an XADD whose answer a Redis restart cut off leaves in the stream.
    const stream = 'bull:twice:oa:events';
    const entries = (await shared.redis.xrange(stream, '-', '+')) as [string, string[]][];
    const copy = entries.find(([, fields]) => fields.includes('outcome'));
    expect(copy).toBeDefined();
    await shared.redis.xadd(stream, '*', ...(copy?.[1] ?? []));
    await outbox.add('sendText', { user_id: 'u1', msg: 'after' }, { key: 'after' });
    await until(2);
    // The copy of the first outcome would have come before the second one.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(seen.map(([name, event]) => `${name} ${event.key}`)).toEqual([
      'delivered once',
      'delivered after',
    ]);
  });

  /** The ids of the clients blocked reading a stream (the outbox's events reader), from Redis's CLIENT LIST. */
  const readers = async () =>
    String(await shared.redis.client('LIST'))
      .split('\n')
      .filter((line) => / cmd=xread/.test(line));

  it("with the caller's ioredis client, the reader leaves the client free and open", async () => {
    const redis = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    closing.push(() => redis.quit());
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    const outbox = createOutbox({ connection: { client: redis }, name: 'own' });
    closing.push(
      () => mock.close(),
      () => client.close(),
    );
    const { until } = collect(outbox);
    // Once the reader waits on the stream, the caller's client still answers at once.
    await expect.poll(async () => (await readers()).length, { timeout: 10_000 }).toBe(1);
    expect(await Promise.race([redis.ping(), new Promise((r) => setTimeout(() => r('blocked'), 2000))])).toBe(
      'PONG',
    );
    const worker = outbox.work({ client });
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'mine' });
    expect((await until(1))[0]?.[0]).toBe('delivered');
    await worker.close();
    await outbox.close();
    expect(redis.status).toBe('ready');
    await expect.poll(async () => (await readers()).length, { timeout: 10_000 }).toBe(0);
  });

  it("refuses a caller's client that gives up on commands, which BullMQ's readers and workers refuse", () => {
    const redis = redisClient(shared.server.url, { lazyConnect: true });
    expect(() => createOutbox({ connection: { client: redis } })).toThrow(/maxRetriesPerRequest: null/);
    redis.disconnect();
  });

  it('a job out of tries: a retry event for each try but the last, then failed', async () => {
    const { mock, client, outbox } = await open({ name: 'tries', attempts: 2 });
    mock.injectFault({ kind: 'rate-limit' }, { path: '/webhook/broadcast-message', times: 2 });
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'tired' });
    const worker = outbox.work({ client });
    const seen = await collect(worker).until(2);
    await worker.close();
    expect(seen.map(([name, e]) => `${name}@${e.attempt}`)).toEqual(['retry@1', 'failed@2']);
    expect(seen[1]?.[1]).toMatchObject({ error: { status: 429 } });
    expect((await outbox.get('tired'))?.state).toBe('failed');
  });

  it('the reader runs while there are listeners: off of the last one closes it, on opens it again', async () => {
    const { client, outbox } = await open();
    const worker = outbox.work({ client });
    const first: string[] = [];
    const listener = (e: OutboxEvents['delivered']) => first.push(e.key);
    outbox.on('delivered', listener);
    await expect.poll(async () => (await readers()).length, { timeout: 10_000 }).toBe(1);
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'one' });
    await expect.poll(() => first, { timeout: 10_000 }).toEqual(['one']);
    outbox.off('delivered', listener);
    await expect.poll(async () => (await readers()).length, { timeout: 10_000 }).toBe(0);
    const { until } = collect(outbox);
    await outbox.add('sendText', { user_id: 'u1', msg: 'y' }, { key: 'two' });
    expect((await until(1)).map(([, e]) => e.key)).toEqual(['two']);
    expect(first).toEqual(['one']);
    await worker.close();
  });

  it('a listener that throws is shown as a process warning', async () => {
    const { client, outbox } = await open();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    closing.push(async () => process.off('warning', onWarning));
    const worker = outbox.work({ client });
    worker.on('delivered', () => {
      throw new Error('a bug in the app');
    });
    worker.on('delivered', async () => {
      throw new Error('an async bug');
    });
    const { until } = collect(worker);
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'k' });
    await until(1);
    await worker.close();
    await expect
      .poll(() => warnings.map((w) => `${w.name}: ${w.message}`), { timeout: 5000 })
      .toEqual([
        "OAListenerWarning: oa-messaging: an outbox 'delivered' listener threw: a bug in the app",
        "OAListenerWarning: oa-messaging: an outbox 'delivered' listener threw: an async bug",
      ]);
    expect((await outbox.get('k'))?.state).toBe('delivered');
  });

  it('close() with a listener settles while Redis cannot be reached', async () => {
    // Port 1: nothing listens there; the reader's start waits on a connection that never comes.
    const outbox = createOutbox({ connection: { url: 'redis://127.0.0.1:1' } });
    outbox.on('delivered', () => {});
    await new Promise((r) => setTimeout(r, 300));
    expect(
      await settleWithin(outbox.close(), 5000, 'close() of an outbox whose Redis is down'),
    ).toMatchObject({
      ok: true,
    });
  });

  it('refuses an event name it does not know', async () => {
    const outbox = createOutbox({ connection: { url: shared.server.url } });
    closing.push(() => outbox.close());
    expect(() => outbox.on('completed' as never, () => {})).toThrow(OAConfigError);
  });
});
