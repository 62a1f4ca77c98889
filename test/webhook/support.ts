/** Shared pieces of the webhook tests: fixtures, event builders, a loopback node:http server. */
import { readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, expect } from 'vitest';
import {
  getMessageText,
  isMessageEvent,
  parseWebhookEvent,
  type WebhookEvent,
  type WebhookMessageEvent,
} from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';

/** The event as a message event; fails the test when it is another kind (or missing). */
export function asMessage(event: WebhookEvent | undefined): WebhookMessageEvent {
  if (!event || !isMessageEvent(event)) throw new Error(`expected a message event, got ${event?.event_type}`);
  return event;
}

/** `parseWebhookEvent`, for bodies that must give a message event. */
export const parseMessage = (body: unknown): WebhookMessageEvent => asMessage(parseWebhookEvent(body));

export const FIXTURE_DIR = new URL('../fixtures/tim/', import.meta.url);

export const fixtureNames = (): string[] =>
  readdirSync(FIXTURE_DIR)
    .filter((name) => name.endsWith('.json'))
    .sort();

export const loadFixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(name, FIXTURE_DIR), 'utf8'));

/** The callback fields a bare element or MsgBody fragment lacks, as in Tencent's after-send sample. */
export const CALLBACK_BASE = {
  CallbackCommand: 'C2C.CallbackAfterSendMsg',
  From_Account: 'user_42',
  To_Account: 'oa_shop',
  MsgSeq: 48374,
  MsgRandom: 2837546,
  MsgTime: 1557481126,
  MsgKey: '48374_2837546_1557481126',
  OnlineOnlyFlag: 0,
  SendMsgResult: 0,
  ErrorInfo: 'send msg succeed',
  UnreadMsgNum: 1,
  EventTime: 1557481126123,
};

/** The OA envelope (spec "Events") around a callback. */
export function envelope(data: unknown, overrides: Record<string, unknown> = {}) {
  return {
    event_type: 'message',
    username: 'oa_shop',
    data,
    timestamp: '2019-05-10T09:38:46.000Z',
    ...overrides,
  };
}

/** A whole event around the given MsgBody elements, with a distinct MsgKey per `seq`. */
export function eventWith(elements: unknown[], seq = 1, extra: Record<string, unknown> = {}) {
  const data = {
    ...CALLBACK_BASE,
    MsgSeq: seq,
    MsgKey: `${seq}_2837546_1557481126`,
    MsgBody: elements,
    ...extra,
  };
  return envelope(data);
}

export const textEvent = (text: string, seq = 1) =>
  eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: text } }], seq);

export { listen } from '../helpers/listen.js';

/** A fetch-style handler served by @hono/node-server on 127.0.0.1, and how to stop it. */
export async function serveFetch(fetch: (request: Request) => Promise<Response>) {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const started = serve({ fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive connections of the test's fetch would hold close() for seconds.
        if ('closeAllConnections' in server) server.closeAllConnections();
      }),
  };
}

/** POSTs JSON (a string is sent as is) and returns the status and parsed JSON answer. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: payload,
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined; // a framework's own HTML error page
  }
  return {
    status: response.status,
    headers: response.headers,
    json: json as Record<string, unknown> | undefined,
    text,
  };
}

/** Collects the process's unhandled rejections while the file's tests run: there must be none. */
export function trackUnhandledRejections(): unknown[] {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  beforeAll(() => {
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });
  return unhandled;
}

/** A logger that records what it is told. */
export function recordingLogger() {
  const lines: { level: string; message: string }[] = [];
  const at = (level: string) => (message: string) => {
    lines.push({ level, message });
  };
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

const headerOf = (request: IncomingMessage | Request, name: string) =>
  request instanceof Request ? request.headers.get(name) : request.headers[name];

/**
 * Options for the framework scenario: a 4 KiB limit (below every framework's own), a verify that refuses
 * `x-test-auth: deny`, and an onEvent that throws on the text "boom".
 */
export function scenarioOptions() {
  const received: WebhookEvent[] = [];
  const options = {
    maxBodyBytes: 4096,
    onEvent: (event: WebhookEvent) => {
      if (getMessageText(event) === 'boom') throw new Error('boom');
      received.push(event);
    },
    verify: (request: IncomingMessage | Request) => headerOf(request, 'x-test-auth') !== 'deny',
  };
  return { received, options };
}

/** Drives a mounted handler through 200, 405, 400 (not JSON, not an object), 413, 401 and 500. */
export async function expectScenario(url: string, received: WebhookEvent[]) {
  const ok = await post(url, textEvent('hello from a framework'));
  expect(ok).toMatchObject({ status: 200, json: { ok: true } });
  expect(received).toHaveLength(1);
  const element = asMessage(received[0]).data.MsgBody[0]!;
  expect(element.MsgType === 'TIMTextElem' && element.MsgContent.Text).toBe('hello from a framework');

  const get = await fetch(url);
  expect(get.status).toBe(405);
  expect(get.headers.get('allow')).toBe('POST');

  expect((await post(url, '{"event_type":')).status).toBe(400);
  expect((await post(url, '["not", "an", "object"]')).status).toBe(400);
  expect((await post(url, { ...textEvent('big', 2), pad: 'x'.repeat(8192) })).status).toBe(413);
  expect((await post(url, textEvent('x', 3), { 'x-test-auth': 'deny' })).status).toBe(401);
  expect((await post(url, textEvent('boom', 4))).status).toBe(500);
  expect((await post(url, textEvent('after the failure', 5))).status).toBe(200);
  expect(received).toHaveLength(2);
}

/** An answer of a delivery: its status and JSON body. */
export interface DeliveryAnswer {
  status: number;
  json: Record<string, unknown> | undefined;
}

/**
 * The OA redelivering while the first delivery is slow: an `onEvent` whose first call takes `firstMs`
 * (every call counted), the first delivery sent with `sendFirst`, then, `afterMs` after that `onEvent`
 * started, the same body sent again with `sendAgain`. Resolves to both answers and the number of
 * `onEvent` calls; every wait is bounded.
 */
export function slowFirstDelivery(firstMs: number) {
  let calls = 0;
  const onEvent = async () => {
    calls++;
    if (calls === 1) await new Promise((resolve) => setTimeout(resolve, firstMs));
  };
  async function redeliver(
    sendFirst: () => Promise<DeliveryAnswer>,
    sendAgain: () => Promise<DeliveryAnswer>,
    afterMs: number,
  ) {
    const first = settleWithin(sendFirst(), firstMs + 8_000, 'the first delivery');
    const started = performance.now() + 5_000;
    while (calls === 0 && performance.now() < started) await new Promise((r) => setTimeout(r, 5));
    expect(calls, 'the first onEvent started').toBe(1);
    await new Promise((resolve) => setTimeout(resolve, afterMs));
    const again = await settleWithin(sendAgain(), firstMs + 8_000, 'the redelivery');
    const answers = [await first, again].map((outcome) => {
      if (!outcome.ok) throw outcome.error;
      return outcome.value;
    });
    return { first: answers[0], again: answers[1], calls };
  }
  return { onEvent, redeliver };
}
