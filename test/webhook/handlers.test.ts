/**
 * The behaviour both handlers share, driven through each: the node handler over a real node:http server
 * on loopback, the fetch handler with `Request` objects.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAConfigError } from '../../src/index.js';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { type Driver, drivers, type Options } from './drivers.js';
import { asMessage, recordingLogger, textEvent } from './support.js';

/** A body sent in chunks with no Content-Length, so only the streaming check can catch it. */
function chunked(totalBytes: number, chunkBytes = 16 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= totalBytes) return controller.close();
      const size = Math.min(chunkBytes, totalBytes - sent);
      sent += size;
      controller.enqueue(new Uint8Array(size).fill(0x20));
    },
  });
}

describe.each(Object.entries(drivers))('%s', (_name, start) => {
  let driver: Driver | undefined;
  afterEach(async () => {
    await driver?.close();
    driver = undefined;
  });

  const setup = async (options: Partial<Options> = {}) => {
    const received: WebhookEvent[] = [];
    const onEvent = vi.fn((event: WebhookEvent) => {
      received.push(event);
    });
    driver = await start({ onEvent, ...options });
    return { driver, received, onEvent };
  };

  it('answers 200 and hands onEvent the typed event', async () => {
    const { driver, received } = await setup();
    const answer = await driver.send('POST', JSON.stringify(textEvent('hello')));
    expect(answer).toMatchObject({ status: 200, json: { ok: true } });
    const element = asMessage(received[0]).data.MsgBody[0];
    expect(element?.MsgType === 'TIMTextElem' && element.MsgContent.Text).toBe('hello');
  });

  it.each(['GET', 'PUT', 'DELETE', 'PATCH'])('answers 405 with Allow: POST to %s', async (method) => {
    const { driver, onEvent } = await setup();
    const answer = await driver.send(method, method === 'GET' ? undefined : '{}');
    expect(answer).toMatchObject({ status: 405, allow: 'POST' });
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('answers 400 to what can never be an event: not JSON, not an object', async () => {
    const { driver, onEvent } = await setup();
    expect((await driver.send('POST', '{nope')).status).toBe(400);
    expect((await driver.send('POST', '"a string"')).json.error).toMatch(/expected a JSON object/);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('answers 200 to an event that breaks the schema, and lists what did not match', async () => {
    const { driver, received } = await setup();
    const answer = await driver.send('POST', JSON.stringify({ ...textEvent('x'), data: { MsgBody: 'no' } }));
    expect(answer).toMatchObject({ status: 200, json: { ok: true } });
    expect(received).toHaveLength(1);
    expect(received[0]?.issues.map((issue) => issue.path.join('.'))).toEqual([
      'data.MsgBody',
      'data.From_Account',
      'data.To_Account',
    ]);
  });

  it('answers 413 from Content-Length before reading', async () => {
    const { driver, onEvent } = await setup({ maxBodyBytes: 1000 });
    const answer = await driver.send('POST', JSON.stringify({ ...textEvent('x'), pad: 'x'.repeat(2000) }));
    expect(answer.status).toBe(413);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('answers 413 while streaming a body with no Content-Length', async () => {
    const { driver, onEvent } = await setup({ maxBodyBytes: 64 * 1024 });
    expect((await driver.send('POST', chunked(256 * 1024))).status).toBe(413);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('has a default limit of 1 MiB', async () => {
    const { driver } = await setup();
    const big = JSON.stringify({ ...textEvent('x'), pad: 'x'.repeat(1024 * 1024) });
    expect((await driver.send('POST', big)).status).toBe(413);
    const fits = JSON.stringify({ ...textEvent('x'), pad: 'x'.repeat(1000 * 1000) });
    expect((await driver.send('POST', fits)).status).toBe(200);
  });

  it('answers 401 when an async verify refuses, and gives verify the raw body', async () => {
    const seen: string[] = [];
    const verify = async (_request: unknown, raw: Uint8Array | undefined) => {
      seen.push(new TextDecoder().decode(raw));
      return false;
    };
    const { driver, onEvent } = await setup({ verify });
    const body = JSON.stringify(textEvent('x'));
    expect((await driver.send('POST', body)).status).toBe(401);
    expect(seen).toEqual([body]);
    expect(onEvent).not.toHaveBeenCalled();
  });

  it('lets verify read the request (a shared secret in a header)', async () => {
    const verify = (request: IncomingMessage | Request) => {
      const value =
        request instanceof Request ? request.headers.get('x-hook-secret') : request.headers['x-hook-secret'];
      return value === 's3cret';
    };
    const { driver } = await setup({ verify });
    const body = JSON.stringify(textEvent('x'));
    expect((await driver.send('POST', body, { 'x-hook-secret': 'wrong' })).status).toBe(401);
    expect((await driver.send('POST', body, { 'x-hook-secret': 's3cret' })).status).toBe(200);
  });

  it('answers 500 when onEvent throws, logs it, and keeps serving', async () => {
    const { lines, logger } = recordingLogger();
    let calls = 0;
    const onEvent = async () => {
      calls += 1;
      if (calls === 1) throw new Error('database down');
    };
    const { driver } = await setup({ onEvent, logger });
    expect(await driver.send('POST', JSON.stringify(textEvent('x')))).toMatchObject({
      status: 500,
      json: { error: 'Internal error' },
    });
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
    expect((await driver.send('POST', JSON.stringify(textEvent('x', 2)))).status).toBe(200);
  });

  it('answers 500 when verify throws', async () => {
    const verify = () => {
      throw new Error('allow-list unavailable');
    };
    const { driver } = await setup({ verify });
    expect((await driver.send('POST', JSON.stringify(textEvent('x')))).status).toBe(500);
  });

  it('with dedupe, skips a redelivery with 200 and processes one after a failure', async () => {
    let fail = true;
    const seen: string[] = [];
    const onEvent = (event: WebhookEvent) => {
      const { data } = asMessage(event);
      seen.push(String(data.MsgKey));
      if (fail && data.MsgSeq === 9) throw new Error('first attempt fails');
    };
    const { driver } = await setup({ onEvent, dedupe: { max: 100, ttlMs: 60_000 } });
    const first = JSON.stringify(textEvent('a', 1));
    expect((await driver.send('POST', first)).status).toBe(200);
    expect(await driver.send('POST', first)).toMatchObject({
      status: 200,
      json: { ok: true, duplicate: true },
    });
    const flaky = JSON.stringify(textEvent('b', 9));
    expect((await driver.send('POST', flaky)).status).toBe(500);
    fail = false;
    expect((await driver.send('POST', flaky)).json).toEqual({ ok: true });
    expect(seen).toEqual(['1_2837546_1557481126', '9_2837546_1557481126', '9_2837546_1557481126']);
  });

  it('without dedupe, hands every delivery to onEvent', async () => {
    const { driver, onEvent } = await setup();
    const body = JSON.stringify(textEvent('a'));
    await driver.send('POST', body);
    await driver.send('POST', body);
    expect(onEvent).toHaveBeenCalledTimes(2);
  });
});

describe('handler options', () => {
  it('refuses options that cannot work, at creation', () => {
    const onEvent = () => undefined;
    expect(() => createWebhookHandler({ onEvent, maxBodyBytes: 0 })).toThrow(OAConfigError);
    expect(() => createFetchWebhookHandler({ onEvent: undefined as never })).toThrow(/onEvent/);
  });
});
