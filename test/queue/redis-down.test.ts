// The producer calls while Redis cannot be reached: the webhook of an inbox answers an error (so the OA
// delivers again) and the outbox's calls reject with OAConnectionError, each within a bounded time,
// instead of waiting for Redis to come back; once it is back, the same inbox and outbox work again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAConnectionError } from '../../src/index.js';
import { createInbox, createOutbox, type Inbox, type Outbox } from '../../src/queue/index.js';
import { createWebhookHandler } from '../../src/webhook/index.js';
import { REDIS_SERVER, type RedisServer, redisClient, startRedis } from '../redis/redis-server.js';
import { envelope, listen, loadFixture, post } from '../webhook/support.js';

// Twice the SDK's 5 s bound: a call still pending then is waiting for Redis to come back.
const DEADLINE_MS = 10_000;

/** `promise`'s value, or a sentence saying it was still pending after `ms`. */
async function within<T>(promise: Promise<T>, ms = DEADLINE_MS): Promise<T | string> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`still pending after ${ms} ms`), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What the call rejected with, or `'resolved'`. */
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => 'resolved',
    (error: unknown) => error,
  );

/** A real inbound payload (Tencent's after-send callback) in the OA envelope, one `MsgKey` per `seq`. */
const inbound = (seq: number) => {
  const data = loadFixture('tencent-doc-C2C.CallbackAfterSendMsg-1.json');
  return envelope({ ...data, MsgSeq: seq, MsgKey: `${seq}_2837546_1557481126` });
};

const text = (key: string) => ['sendText', { user_id: 'u1', msg: `for ${key}` }, { key }] as const;

/** Each producer call, started now, as what it settled with within the deadline. */
function producerCalls(http: string, inbox: Inbox, outbox: Outbox, seq: number) {
  return Promise.all([
    within(post(http, inbound(seq)).then((answer) => answer.status)),
    within(rejection(inbox.store(inbound(seq + 1) as never))),
    within(rejection(outbox.add(...text(`during-${seq}`)))),
    within(rejection(outbox.addMany([{ method: 'sendText', params: text('many')[1], key: `many-${seq}` }]))),
    within(rejection(outbox.get('before'))),
    within(rejection(outbox.counts())),
  ]);
}

const CALLS = ['inbox.store', 'outbox.add', 'outbox.addMany', 'outbox.get', 'outbox.counts'];

/** The webhook answered an error, each call rejected with OAConnectionError; `secret` in none of them. */
function expectRefused([status, ...errors]: unknown[], secret?: string) {
  expect.soft(status, 'the webhook answer').toBeTypeOf('number');
  expect.soft(status, 'the webhook answer').not.toBe(200);
  expect.soft(Number(status), 'the webhook answer').toBeGreaterThanOrEqual(300);
  for (const [i, error] of errors.entries()) {
    const call = CALLS[i] ?? '';
    expect.soft(error, call).toBeInstanceOf(OAConnectionError);
    expect.soft((error as Error)?.message, call).toMatch(/Redis could not be reached/);
    if (secret) expect.soft(JSON.stringify(error), call).not.toContain(secret);
  }
}

describe.skipIf(!REDIS_SERVER)('producer calls while Redis is down', () => {
  let server: RedisServer | undefined;
  let up = false;

  beforeAll(async () => {
    server = await startRedis({ appendonly: true });
    up = true;
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('the webhook answers an error and the outbox rejects, in bounded time; both work again once Redis is back', async () => {
    if (!server) throw new Error('no redis-server');
    const url = server.url;
    const inbox = createInbox({ connection: { url }, name: 'down-in' });
    const outbox = createOutbox({ connection: { url }, name: 'down-out' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const http = await listen((req, res) => void handler(req, res));
    const redis = redisClient(url, { lazyConnect: true });
    try {
      expect((await post(http.url, inbound(1))).status).toBe(200);
      await outbox.add(...text('before'));

      await server.shutdown();
      up = false;
      expectRefused(await producerCalls(http.url, inbox, outbox, 10));

      await server.start();
      up = true;
      // The same inbox and outbox, not made again.
      expect(await within(post(http.url, inbound(20)).then((answer) => answer.status))).toBe(200);
      expect(await within(outbox.add(...text('after')).then(() => 'stored'))).toBe('stored');
      expect(await within(outbox.get('after'))).toEqual({ state: 'waiting' });
      await redis.connect();
      // What was stored before the shutdown and after the start; what was refused was not run later.
      expect(await redis.llen('bull:down-in:wait')).toBe(2);
      expect(await outbox.get('before')).toEqual({ state: 'waiting' });
      expect(await outbox.get('during-10')).toBeUndefined();
    } finally {
      // Back up first, so that nothing left waiting for Redis holds the closing.
      if (!up) await server.start();
      redis.disconnect();
      await http.close();
      await inbox.close();
      await outbox.close();
    }
  }, 60_000);

  it('an inbox and an outbox that never reached Redis reject in bounded time, the password in no error', async () => {
    if (!server) throw new Error('no redis-server');
    await server.shutdown();
    up = false;
    // Every node of a cluster, each with the password.
    const url = server.url.replace('redis://', 'redis://user:s3cret-pw@');
    const inbox = createInbox({ connection: { url }, name: 'never-in' });
    const outbox = createOutbox({ connection: { url }, name: 'never-out' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const http = await listen((req, res) => void handler(req, res));
    try {
      expectRefused(await producerCalls(http.url, inbox, outbox, 30), 's3cret-pw');
    } finally {
      await http.close();
      // Closed while Redis is still down: nothing of theirs may wait for it.
      expect(await within(Promise.all([inbox.close(), outbox.close()]).then(() => 'closed'))).toBe('closed');
      await server.start();
      up = true;
    }
  }, 60_000);

  it('with a client of yours: add rejects while Redis is down, works once it is back; close leaves it open', async () => {
    if (!server) throw new Error('no redis-server');
    const client = redisClient(server.url, { maxRetriesPerRequest: null });
    client.on('error', () => {});
    const outbox = createOutbox({ connection: { client }, name: 'down-client' });
    try {
      await outbox.add(...text('before'));
      await server.shutdown();
      up = false;
      const error = await within(rejection(outbox.add(...text('during'))));
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as Error).message).toMatch(/^outbox\.add: Redis could not be reached/);
      await server.start();
      up = true;
      expect(await within(outbox.add(...text('after')).then(() => 'stored'))).toBe('stored');
      expect(await within(outbox.counts())).toMatchObject({ waiting: 2 });
    } finally {
      if (!up) await server.start();
      up = true;
      await outbox.close();
      expect(await client.ping()).toBe('PONG');
      client.disconnect();
    }
  }, 60_000);
});
