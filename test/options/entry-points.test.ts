// Bad options of every entry point: an OAConfigError at once that names the entry point, the option
// and what was given, with nothing sent to the API (a fake OA server on loopback records every
// request) and no connection made to Redis (a TCP server on loopback stands where Redis would be and
// counts the connections it gets).
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { OAClient, OAConfigError } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import {
  createRedisCoordination,
  createRedisDedupeStore,
  createRedisSessionStore,
} from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { createFetchWebhookHandler, createWebhookHandler } from '../../src/webhook/index.js';

let mock: MockServer;
let client: OAClient;
let redisStandIn: Server;
let redisUrl: string;
let connections = 0;

beforeAll(async () => {
  mock = await createMockServer();
  client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  redisStandIn = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => redisStandIn.listen(0, '127.0.0.1', resolve));
  const address = redisStandIn.address();
  redisUrl = `redis://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await client.close();
  await mock.close();
  await new Promise((resolve) => redisStandIn.close(resolve));
});
beforeEach(() => {
  mock.reset();
  connections = 0;
});

/** The error `make` throws, which must be an OAConfigError. */
function refusal(make: () => unknown): OAConfigError {
  let thrown: unknown;
  try {
    make();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(OAConfigError);
  return thrown as OAConfigError;
}

/** Lets any connection or request that was started arrive before the counts are read. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 100));

describe('the client', () => {
  it('names the option and what was given; nothing is sent', async () => {
    const base = { baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret };
    expect(refusal(() => new OAClient({ ...base, timeoutMs: -1 })).message).toBe(
      'timeoutMs must be a number of ms above 0 to 2147483647 (the longest a Node timer waits), got -1',
    );
    expect(refusal(() => new OAClient({ ...base, logger: 'console' as never })).message).toBe(
      'logger must be a logger such as console, got a string',
    );
    expect(
      refusal(() => new OAClient({ ...base, rateLimit: { general: { max: 0, windowMs: 1 } } })).message,
    ).toBe(
      'rateLimit.general must be { max: a positive integer, windowMs: a positive number }, got an object',
    );
    await settle();
    expect(mock.requests).toEqual([]);
  });
});

describe('createBot', () => {
  it('names the option and what was given; nothing is sent', async () => {
    expect(refusal(() => createBot({ client, sessionTtlMs: -1 })).message).toBe(
      'createBot: sessionTtlMs must be a positive number, got -1',
    );
    expect(refusal(() => createBot({ client, maxSessionBytes: Number.NaN })).message).toBe(
      'createBot: maxSessionBytes must be a positive number, got NaN',
    );
    expect(refusal(() => createBot({ client, initialSession: {} as never })).message).toBe(
      'createBot: initialSession must be a function, got an object',
    );
    expect(refusal(() => createBot({ client, logger: true as never })).message).toBe(
      'createBot: logger must be a logger such as console, got true',
    );
    expect(refusal(() => createBot({ client, outbox: {} as never })).message).toMatch(
      /^createBot: outbox must be an outbox of createOutbox/,
    );
    expect(refusal(() => createBot(null as never)).message).toMatch(/^createBot needs \{ client \}/);
    await settle();
    expect(mock.requests).toEqual([]);
  });
});

describe('the outbox and the inbox', () => {
  it('createOutbox and outbox.work name the option and what was given; Redis is not touched', async () => {
    const connection = { url: redisUrl };
    expect(refusal(() => createOutbox({ connection, attempts: 0 })).message).toBe(
      'createOutbox: attempts must be a number, 1 or more, got 0',
    );
    expect(refusal(() => createOutbox({ connection, name: 'a:b' })).message).toBe(
      'createOutbox: name must be a non-empty string without ":", got a string',
    );
    expect(refusal(() => createOutbox({ connection: { url: '' } })).message).toBe(
      'createOutbox: connection.url must be a Redis URL such as redis://127.0.0.1:6379, got a string',
    );
    expect(refusal(() => createOutbox({ connection: {} as never })).message).toBe(
      'createOutbox needs connection: { url } or { client }, exactly one of them',
    );
    const outbox = createOutbox({ connection });
    expect(refusal(() => outbox.work({ client, concurrency: -2 })).message).toBe(
      'outbox.work: concurrency must be a number, 1 or more, got -2',
    );
    expect(refusal(() => outbox.work({} as never)).message).toMatch(/^outbox\.work needs \{ client \}/);
    await outbox.close();
    await settle();
    expect(connections).toBe(0);
    expect(mock.requests).toEqual([]);
  });

  it('createInbox and inbox.work name the option and what was given; Redis is not touched', async () => {
    const connection = { url: redisUrl };
    expect(refusal(() => createInbox({ connection, order: 'user' as never })).message).toBe(
      "createInbox: order must be 'none' or 'sender', got a string",
    );
    expect(refusal(() => createInbox({ connection, retentionMs: 0.5 })).message).toBe(
      'createInbox: retentionMs must be a number, 1 or more, got 0.5',
    );
    const inbox = createInbox({ connection });
    expect(refusal(() => inbox.work(async () => {}, { lockDurationMs: 0 })).message).toBe(
      'inbox.work: lockDurationMs must be a number, 1 or more, got 0',
    );
    await inbox.close();
    await settle();
    expect(connections).toBe(0);
  });
});

describe('the webhook handlers', () => {
  it('name the option and what was given, for either handler', () => {
    const onEvent = () => {};
    expect(refusal(() => createWebhookHandler({ onEvent, maxBodyBytes: 1.5 })).message).toBe(
      'webhook handler: maxBodyBytes must be a positive integer, got 1.5',
    );
    expect(refusal(() => createFetchWebhookHandler({ onEvent, dedupe: { ttlMs: 0 } })).message).toBe(
      'webhook handler: dedupe.ttlMs must be a positive number of ms, got 0',
    );
    expect(refusal(() => createFetchWebhookHandler({ onEvent, dedupe: 'yes' as never })).message).toBe(
      'webhook handler: dedupe must be true, false or the dedupe options, got a string',
    );
    expect(refusal(() => createWebhookHandler({ onEvent, verify: 'token' as never })).message).toBe(
      'webhook handler: verify must be a function, got a string',
    );
    expect(refusal(() => createFetchWebhookHandler({ onEvent, logger: 1 as never })).message).toBe(
      'webhook handler: logger must be a logger such as console, got 1',
    );
  });
});

describe('oa-messaging/redis', () => {
  it('names the option and what was given; Redis is not touched', async () => {
    expect(refusal(() => createRedisCoordination({ url: redisUrl, lockTtlMs: -1 })).message).toBe(
      'createRedisCoordination: lockTtlMs must be a positive number of ms, got -1',
    );
    expect(
      refusal(() => createRedisCoordination({ url: redisUrl, keepTokenAfterExpiryMs: true as never }))
        .message,
    ).toBe(
      'createRedisCoordination: keepTokenAfterExpiryMs must be a positive number of ms or false, got true',
    );
    expect(refusal(() => createRedisSessionStore({ url: redisUrl, prefix: 5 as never })).message).toBe(
      'createRedisSessionStore: prefix must be a string, got 5',
    );
    expect(refusal(() => createRedisDedupeStore({ url: redisUrl, commandTimeoutMs: 0 })).message).toBe(
      'createRedisDedupeStore: commandTimeoutMs must be a positive number of ms, got 0',
    );
    expect(
      refusal(() => createRedisDedupeStore({ url: redisUrl, client: { eval() {}, evalsha() {} } } as never))
        .message,
    ).toBe('createRedisDedupeStore needs exactly one of url and client');
    await settle();
    expect(connections).toBe(0);
  });
});
