// What a campaign needs of the outbox, against a real redis-server and the fake API: what `add` and
// `addMany` stored, `waitFor`, a send at a given time (`at`) and `cancel`.
import { Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { OAAbortError, OAClient, OATimeoutError, OAValidationError } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { queueKeyName } from '../../src/redis/keys.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { ON_CLUSTER, REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';

const text = (key: string): OutboxEntry => ({ method: 'sendText', params: { user_id: 'u1', msg: key }, key });

describe.skipIf(!REDIS_SERVER)('outbox campaign tools', () => {
  const shared = useRedisServer();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  const open = async (name: string): Promise<{ outbox: Outbox; mock: MockServer; client: OAClient }> => {
    const mock = await createMockServer();
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      maxRetries: 0,
    });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name });
    closing.push(
      () => mock.close(),
      () => client.close(),
      () => outbox.close(),
    );
    return { outbox, mock, client };
  };

  it('add and addMany tell how many they added and which keys were already known', async () => {
    const { outbox } = await open('added-known');
    const params = { user_id: 'u1', msg: 'x' };
    expect(await outbox.add('sendText', params, { key: 'a' })).toEqual({ added: 1, known: 0, knownKeys: [] });
    expect(await outbox.add('sendText', params, { key: 'a' })).toEqual({
      added: 0,
      known: 1,
      knownKeys: ['a'],
    });
    // A key twice in one call: the first adds it, the second finds it.
    expect(await outbox.addMany(['a', 'b', 'c', 'b'].map(text))).toEqual({
      added: 2,
      known: 2,
      knownKeys: ['a', 'b'],
    });
    expect(await outbox.counts()).toMatchObject({ waiting: 3 });

    // Across chunks of 1,000, from an iterable read as it goes.
    const first = Array.from({ length: 1200 }, (_, i) => text(`k${i}`));
    expect(await outbox.addMany(first)).toMatchObject({ added: 1200, known: 0 });
    const again = await outbox.addMany(
      (function* () {
        for (let i = 0; i < 1500; i++) yield text(`k${i}`);
      })(),
    );
    expect(again.added).toBe(300);
    expect(again.known).toBe(1200);
    expect(again.knownKeys).toEqual(first.map((e) => e.key));
    expect(await outbox.counts()).toMatchObject({ waiting: 1503 });
  });

  it('waitFor(keys) resolves with the final states once the events tell them, a final key at once', async () => {
    const { outbox, mock, client } = await open('wait-keys');
    await outbox.add('sendText', { user_id: 'u1', msg: 'early' }, { key: 'early' });
    const first = outbox.work({ client });
    await expect.poll(() => outbox.get('early').then((s) => s?.state), { timeout: 10_000 }).toBe('delivered');
    await first.close();
    // Already final: no worker needed.
    const early = await outbox.waitFor(['early'], { timeoutMs: 5000 });
    expect(early).toEqual(new Map([['early', { state: 'delivered', result: 'success' }]]));

    mock.injectFault(
      { kind: 'error', status: 400, code: 'BAD_REQUEST' },
      { path: '/webhook/broadcast-message' },
    );
    await outbox.addMany([text('bad'), text('good-1'), text('good-2')]);
    const waiting = outbox.waitFor(['early', 'bad', 'good-1', 'good-2'], { timeoutMs: 15_000 });
    const worker = outbox.work({ client });
    closing.push(() => worker.close());
    const states = await waiting;
    expect([...states.keys()].sort()).toEqual(['bad', 'early', 'good-1', 'good-2']);
    expect(states.get('good-1')).toEqual({ state: 'delivered', result: 'success' });
    expect(states.get('bad')).toMatchObject({ state: 'failed', error: { status: 400 } });
    // The same as `get` says.
    for (const [key, status] of states) expect(await outbox.get(key)).toEqual(status);
  });

  it("waitFor('all') waits for every job not final at the call", async () => {
    const { outbox, client, mock } = await open('wait-all');
    await outbox.addMany(Array.from({ length: 12 }, (_, i) => text(`all-${i}`)));
    const waiting = outbox.waitFor('all', { timeoutMs: 15_000 });
    const worker = outbox.work({ client, concurrency: 3 });
    closing.push(() => worker.close());
    const states = await waiting;
    expect(states.size).toBe(12);
    expect([...states.values()].every((s) => s.state === 'delivered')).toBe(true);
    expect(mock.deliveries).toHaveLength(12);
    // Nothing open: resolves at once, empty.
    expect((await outbox.waitFor('all', { timeoutMs: 1000 })).size).toBe(0);
  });

  it('waitFor without timeoutMs ends when an outcome event is missed, by reading the keys again', async () => {
    const { outbox } = await open('wait-missed');
    await outbox.addMany([text('lost-1'), text('lost-2'), text('cancelled')]);
    let heard = 0;
    outbox.on('delivered', () => void heard++);
    const waiting = outbox.waitFor(['lost-1', 'lost-2', 'cancelled'], { recheckMs: 300 });
    // A plain BullMQ worker on the outbox's queue ends the jobs as a worker would whose outcome reports
    // never reach the event stream (it died after storing them): the jobs are final, no event tells it.
    const processed: string[] = [];
    const connection = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    const raw = new Worker(
      queueKeyName('wait-missed', ON_CLUSTER),
      async (job) => {
        processed.push(job.data.key);
        return 'success';
      },
      { connection, autorun: false },
    );
    closing.push(async () => {
      await raw.close();
      await connection.quit();
    });
    // Cancelled once the wait has read it open (its first reads take a few ms): it is left out.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await expect(outbox.cancel('cancelled')).resolves.toEqual({ cancelled: true });
    void raw.run();
    const settled = await Promise.race([
      waiting,
      new Promise((resolve) => setTimeout(() => resolve('still waiting'), 8000)),
    ]);
    expect(settled).toEqual(
      new Map([
        ['lost-1', { state: 'delivered', result: 'success' }],
        ['lost-2', { state: 'delivered', result: 'success' }],
      ]),
    );
    expect(processed.sort()).toEqual(['lost-1', 'lost-2']);
    expect(heard).toBe(0);
  });

  it('waitFor is bounded by timeoutMs and signal; a key never added is refused', async () => {
    const { outbox } = await open('wait-bounds');
    await outbox.addMany([text('t1'), text('t2')]);
    const started = Date.now();
    const late = await outbox.waitFor(['t1', 't2'], { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(OATimeoutError);
    expect((late as Error).message).toMatch(/2 of 2 keys/);
    expect(Date.now() - started).toBeLessThan(5000);

    const controller = new AbortController();
    const aborted = outbox.waitFor('all', { signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(), 100);
    expect(await aborted).toBeInstanceOf(OAAbortError);

    await expect(outbox.waitFor(['t1', 'never-added'], { timeoutMs: 1000 })).rejects.toThrow(
      OAValidationError,
    );
    await expect(outbox.waitFor(['t1'], { timeoutMs: -1 })).rejects.toThrow(OAValidationError);
  });

  it('add with at: delayed until that time; a past date is now; an invalid Date is refused', async () => {
    const { outbox, client, mock } = await open('at');
    const at = new Date(Date.now() + 1500);
    await outbox.add('sendText', { user_id: 'u1', msg: 'later' }, { key: 'later', at });
    await outbox.addMany([{ ...text('past'), at: new Date(Date.now() - 60_000) }]);
    expect(await outbox.get('later')).toEqual({ state: 'delayed' });
    expect(await outbox.get('past')).toEqual({ state: 'waiting' });

    const bad = await outbox
      .add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'bad-at', at: new Date('nope') })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OAValidationError);
    expect((bad as OAValidationError).issues[0]?.path).toEqual(['at']);
    await expect(
      outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'both', at, delay: 10 }),
    ).rejects.toThrow(OAValidationError);
    expect(await outbox.get('bad-at')).toBeUndefined();

    const worker = outbox.work({ client });
    closing.push(() => worker.close());
    const states = await outbox.waitFor(['later', 'past'], { timeoutMs: 15_000 });
    expect(states.get('later')?.state).toBe('delivered');
    const sentAt = mock.deliveries.find((d) => d.items[0]?.msg === 'later')?.at ?? 0;
    expect(sentAt).toBeGreaterThanOrEqual(at.getTime() - 50);
  });

  it('cancel removes a waiting or delayed job; an active or final one is kept and says why', async () => {
    const { outbox, client, mock } = await open('cancel');
    await outbox.add('sendText', { user_id: 'u1', msg: 'w' }, { key: 'w' });
    await outbox.add('sendText', { user_id: 'u1', msg: 'd' }, { key: 'd', delay: 60_000 });
    expect(await outbox.cancel('w')).toEqual({ cancelled: true });
    expect(await outbox.cancel('d')).toEqual({ cancelled: true });
    expect(await outbox.get('w')).toBeUndefined();
    expect(await outbox.counts()).toMatchObject({ waiting: 0, delayed: 0 });
    expect(await outbox.cancel('w')).toEqual({ cancelled: false, state: undefined });
    // Cancelled, so no longer known: the key can be added again.
    expect(await outbox.add('sendText', { user_id: 'u1', msg: 'w2' }, { key: 'w' })).toMatchObject({
      added: 1,
    });

    // Both sends slow (w2 goes first): 'slow' stays active long enough to be seen.
    mock.injectFault({ kind: 'delay', delayMs: 1500 }, { path: '/webhook/broadcast-message', times: 2 });
    await outbox.add('sendText', { user_id: 'u1', msg: 'slow' }, { key: 'slow' });
    const worker = outbox.work({ client });
    closing.push(() => worker.close());
    await expect.poll(() => outbox.get('slow').then((s) => s?.state), { timeout: 10_000 }).toBe('active');
    expect(await outbox.cancel('slow')).toEqual({ cancelled: false, state: 'active' });
    const states = await outbox.waitFor(['slow', 'w'], { timeoutMs: 15_000 });
    expect(states.get('slow')?.state).toBe('delivered');
    expect(await outbox.cancel('slow')).toEqual({ cancelled: false, state: 'delivered' });
    expect(await outbox.get('slow')).toMatchObject({ state: 'delivered' });
    expect(mock.deliveries.map((d) => d.items[0]?.msg).sort()).toEqual(['slow', 'w2']);
  });
});
