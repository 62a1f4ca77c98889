// The outbox against a real redis-server and the fake API: what is stored, what is sent, what `get`
// and `counts` say.
import { Queue } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryTokenStore, OAClient, OAValidationError, type StoredToken } from '../../src/index.js';
import {
  createOutbox,
  type Outbox,
  type OutboxCounts,
  type OutboxEntry,
  type OutboxEvents,
} from '../../src/queue/index.js';
import { queueKeyName } from '../../src/redis/keys.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { ON_CLUSTER, REDIS_SERVER, redisClient, useRedisServer } from '../redis/redis-server.js';

const EMPTY: OutboxCounts = { waiting: 0, delayed: 0, active: 0, delivered: 0, failed: 0, unknown: 0 };

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!REDIS_SERVER)('outbox', () => {
  const shared = useRedisServer();
  let outbox: Outbox | undefined;
  let client: OAClient | undefined;
  let mock: MockServer | undefined;

  afterEach(async () => {
    await outbox?.close();
    await client?.close();
    await mock?.close();
    outbox = client = mock = undefined;
  });

  const open = async (
    options: { retentionMs?: number; attempts?: number } = {},
    tokenStore?: MemoryTokenStore,
  ) => {
    mock = await createMockServer();
    client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      maxRetries: 0,
      tokenStore,
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'test', ...options });
    return { mock, client, outbox };
  };

  it('sends every method once; a key added again keeps its one job; get and counts agree', async () => {
    const { mock, client, outbox } = await open();
    await outbox.add('sendText', { user_id: 'u1', msg: 'first' }, { key: 'order-1' });
    await outbox.add('sendText', { user_id: 'u1', msg: 'second copy' }, { key: 'order-1' });
    await outbox.add(
      'sendImage',
      { user_id: 'u1', image_url: 'https://example.com/a.png' },
      { key: 'img:1' },
    );
    await outbox.add('sendGreeting', { user_id: 'u2' }, { key: '42' });
    await outbox.add('broadcast', { target: 'all', items: [{ type: 'message', msg: 'all' }] } as never, {
      key: 'b',
    });
    expect(await outbox.get('order-1')).toEqual({ state: 'waiting' });
    expect(await outbox.counts()).toEqual({ ...EMPTY, waiting: 4 });

    const worker = outbox.work({ client, concurrency: 2 });
    const counts = await until(outbox.counts, (c) => c.delivered === 4);
    expect(counts).toEqual({ ...EMPTY, delivered: 4 });
    await worker.close();

    expect(mock.deliveries.map((d) => d.endpoint).sort()).toEqual(
      ['broadcast', 'sendGreeting', 'sendImage', 'sendText'].sort(),
    );
    expect(mock.deliveries.find((d) => d.endpoint === 'sendText')?.items).toEqual([
      { type: 'message', msg: 'first' },
    ]);
    expect(await outbox.get('order-1')).toEqual({ state: 'delivered', result: 'success' });
    const broadcast = await outbox.get('b');
    expect(broadcast?.state).toBe('delivered');
    expect(broadcast?.result).toMatchObject({ id: expect.anything() });
    // Retention: a delivered key is still known; adding it again sends nothing.
    await outbox.add('sendText', { user_id: 'u1', msg: 'again' }, { key: 'order-1' });
    expect((await outbox.counts()).waiting).toBe(0);
    expect(await outbox.get('never-added')).toBeUndefined();
  });

  it('a final API error fails at once with the error kept; nothing is tried again', async () => {
    const { mock, client, outbox } = await open();
    mock.injectFault(
      { kind: 'error', status: 400, code: 'BAD_REQUEST' },
      { path: '/webhook/broadcast-message' },
    );
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'k' });
    const worker = outbox.work({ client });
    const counts = await until(outbox.counts, (c) => c.failed === 1);
    await worker.close();
    expect(counts).toEqual({ ...EMPTY, failed: 1 });
    const status = await outbox.get('k');
    expect(status?.state).toBe('failed');
    expect(status?.error).toMatchObject({ status: 400 });
    expect(mock.requests.filter((r) => r.path.endsWith('/webhook/broadcast-message'))).toHaveLength(1);
  });

  it('a send that was not sent (429) is tried again and delivered once', async () => {
    const { mock, client, outbox } = await open();
    mock.injectFault({ kind: 'rate-limit' }, { path: '/webhook/broadcast-message', times: 1 });
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'k' });
    const worker = outbox.work({ client });
    const counts = await until(outbox.counts, (c) => c.delivered === 1);
    await worker.close();
    expect(counts).toEqual({ ...EMPTY, delivered: 1 });
    expect(mock.deliveries).toHaveLength(1);
  });

  it('a job picked up again with its may-have-left record ends unknown and is not sent', async () => {
    const { mock, client, outbox } = await open();
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'k' });
    // As a worker that died after recording: the record is on the job when it is handed out again.
    const record = JSON.stringify({ token: 'dead', pid: 1, host: 'h', at: 1 });
    await shared.redis.hset('bull:test:oa:job:k-k', 'sent', record);
    const worker = outbox.work({ client });
    const counts = await until(outbox.counts, (c) => c.unknown === 1);
    await worker.close();
    expect(counts).toEqual({ ...EMPTY, unknown: 1 });
    expect(mock.deliveries).toHaveLength(0);
    const status = await outbox.get('k');
    expect(status?.state).toBe('unknown');
    expect(status?.error).toMatchObject({ deliveryUnknown: true, record: { pid: 1 } });
  });

  it('a job added by another tool runs only an outbox send method with valid params', async () => {
    // Every token pair the worker's client obtains, to look for it in Redis afterwards.
    const saved: StoredToken[] = [];
    const store = new (class extends MemoryTokenStore {
      override set(key: string, token: StoredToken) {
        saved.push(token);
        super.set(key, token);
      }
    })();
    const { mock, client, outbox } = await open({}, store);
    // Plain BullMQ jobs on the outbox's queue, as any tool could add them (with tries to spare).
    const bad: [key: string, method: string, params: unknown, named: RegExp][] = [
      ['gen', 'generateToken', {}, /generateToken/],
      ['close', 'close', {}, /got close/],
      ['refresh', 'refreshToken', 'a-refresh-token', /refreshToken/],
      ['unknown', 'deleteEverything', {}, /deleteEverything/],
      ['ctor', 'constructor', {}, /got constructor/],
      ['proto', '__proto__', {}, /__proto__/],
      ['bad-params', 'sendText', { user_id: 'u1', msg: '' }, /sendText params.*msg/],
    ];
    const connection = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    const queue = new Queue(queueKeyName('test', ON_CLUSTER), { connection });
    try {
      await queue.addBulk(
        bad.map(([key, method, params]) => ({
          name: method,
          data: { method, params, key },
          opts: { jobId: `k-${key}`, attempts: 3, backoff: { type: 'fixed', delay: 100 } },
        })),
      );
    } finally {
      await queue.close();
      await connection.quit();
    }
    // After them (one at a time, in order): a send the worker's client must still make.
    await outbox.add('sendText', { user_id: 'u1', msg: 'still works' }, { key: 'ok' });

    const worker = outbox.work({ client });
    const ended: { name: string; event: OutboxEvents['failed'] | OutboxEvents['delivered'] }[] = [];
    const retried: string[] = [];
    worker.on('failed', (event) => ended.push({ name: 'failed', event }));
    worker.on('delivered', (event) => ended.push({ name: 'delivered', event }));
    worker.on('unknown', (event) => ended.push({ name: 'unknown', event }));
    worker.on('retry', (event) => retried.push(event.key));
    await until(
      async () => ended.length,
      (n) => n >= bad.length + 1,
      10_000,
    );
    await worker.close();

    const outcome = (key: string) => ended.find((e) => e.event.key === key);
    expect(outcome('ok')?.name).toBe('delivered');
    expect(await outbox.get('ok')).toEqual({ state: 'delivered', result: 'success' });
    // Only the valid send reached the API (with the token it needed first).
    expect(mock.requests.map((r) => r.path)).toEqual([
      expect.stringMatching(/\/auth\/token$/),
      expect.stringMatching(/\/webhook\/broadcast-message$/),
    ]);
    expect(mock.deliveries).toHaveLength(1);
    expect(retried).toEqual([]);
    expect(saved.length).toBeGreaterThan(0);
    const secrets = [
      mock.apiSecret,
      ...saved.flatMap((t) => [t.access_token, t.refresh_token]),
      'access_token',
      'refresh_token',
    ];
    for (const [key, method, , named] of bad) {
      const status = await outbox.get(key);
      expect(status?.state, key).toBe('failed');
      expect(status?.error?.name, key).toBe('OAValidationError');
      expect(status?.error?.message, key).toMatch(named);
      const event = outcome(key);
      expect(event?.name, key).toBe('failed');
      expect(event?.event, key).toMatchObject({
        key,
        method,
        attempt: 1,
        error: { name: 'OAValidationError', message: expect.stringMatching(named) },
      });
      // Nothing of the client's is stored with the job: no result, no token.
      const hash = JSON.stringify([
        await shared.redis.hgetall(`bull:test:k-${key}`),
        await shared.redis.hgetall(`bull:test:oa:job:k-${key}`),
      ]);
      for (const secret of secrets) expect(hash.includes(secret), `${key}: ${secret}`).toBe(false);
    }
    expect((await outbox.counts()).failed).toBe(bad.length);
  });

  it('a job with no data at all ends failed, and its failed event is told', async () => {
    const { client, outbox } = await open();
    const connection = redisClient(shared.server.url, { maxRetriesPerRequest: null });
    const queue = new Queue(queueKeyName('test', ON_CLUSTER), { connection });
    try {
      await queue.add('sendText', null, { jobId: 'k-nodata' });
    } finally {
      await queue.close();
      await connection.quit();
    }
    const worker = outbox.work({ client });
    const failed: OutboxEvents['failed'][] = [];
    worker.on('failed', (event) => failed.push(event));
    await until(
      async () => failed.length,
      (n) => n >= 1,
      10_000,
    );
    await worker.close();
    expect((await outbox.get('nodata'))?.state).toBe('failed');
    expect(failed[0]).toMatchObject({ key: 'nodata', attempt: 1, error: { name: 'OAValidationError' } });
  });

  it('a key that is not well-formed UTF-16 is refused before anything is stored', async () => {
    const { outbox } = await open();
    const params = { user_id: 'u1', msg: 'x' };
    for (const key of ['\uD800', 'a\uDC00b']) {
      const added = await outbox.add('sendText', params, { key }).catch((e: unknown) => e);
      expect(added).toBeInstanceOf(OAValidationError);
      expect((added as OAValidationError).issues[0]?.path).toEqual(['key']);
      const many = await outbox
        .addMany([
          { method: 'sendText', params, key: 'fine' },
          { method: 'sendText', params, key },
        ])
        .catch((e: unknown) => e);
      expect(many).toBeInstanceOf(OAValidationError);
      expect((many as OAValidationError).issues[0]?.path).toEqual([1, 'key']);
      const got = await outbox.get(key).catch((e: unknown) => e);
      expect(got).toBeInstanceOf(OAValidationError);
      expect((got as OAValidationError).issues[0]?.path).toEqual(['key']);
    }
    expect(await outbox.counts()).toEqual(EMPTY);
    // A surrogate pair is a character like any other.
    await outbox.add('sendText', params, { key: 'smile-\u{1F600}' });
    expect(await outbox.get('smile-\u{1F600}')).toEqual({ state: 'waiting' });
  });

  it('checks params and options before storing anything', async () => {
    const { outbox } = await open();
    await expect(outbox.add('sendText', { user_id: 'u1' } as never, { key: 'k' })).rejects.toBeInstanceOf(
      OAValidationError,
    );
    await expect(outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: '' })).rejects.toThrow(/key/);
    await expect(
      outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'k', priority: 0 }),
    ).rejects.toThrow(/priority/);
    await expect(outbox.add('uploadImage' as never, {} as never, { key: 'k' })).rejects.toThrow(/method/);
    // An array is checked whole: a bad entry after more than a chunk of good ones stores nothing.
    const entries: OutboxEntry[] = Array.from({ length: 1500 }, (_, i) => ({
      method: 'sendText',
      params: { user_id: 'u1', msg: `ok ${i}` },
      key: `a-${i}`,
    }));
    entries.push({ method: 'sendText', params: { user_id: 'u1', msg: '' }, key: 'bad' });
    const error = await outbox.addMany(entries).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAValidationError);
    expect((error as OAValidationError).issues[0]?.path).toEqual([1500, 'params', 'msg']);
    expect(await outbox.counts()).toEqual(EMPTY);
  });

  it('addMany stores 100,000 entries in chunks, delays and priorities kept', async () => {
    const { outbox } = await open();
    let midway: Promise<number> | undefined;
    function* entries() {
      for (let i = 0; i < 100_000; i++) {
        // Halfway through, the entries before are already in Redis: stored chunk by chunk.
        if (i === 50_000) midway = shared.redis.llen('bull:test:wait');
        yield { method: 'sendText' as const, params: { user_id: `u${i}`, msg: `m${i}` }, key: `c-${i}` };
      }
    }
    await outbox.addMany(entries());
    await outbox.add('sendText', { user_id: 'u', msg: 'later' }, { key: 'late', delay: 60_000 });
    await outbox.add('sendText', { user_id: 'u', msg: 'p' }, { key: 'p', priority: 5 });
    expect(await outbox.counts()).toEqual({ ...EMPTY, waiting: 100_001, delayed: 1 });
    expect(await outbox.get('late')).toEqual({ state: 'delayed' });
    expect(await midway).toBeGreaterThanOrEqual(45_000);
  }, 120_000);
});
