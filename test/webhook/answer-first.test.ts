/**
 * Answer-first on platforms with a deadline: the fetch handler served on loopback by
 * @hono/node-server, given a Worker-like context per request (`handler(request, ctx)`), answers 200
 * once `store` resolved and runs `onEvent` inside the context's `waitUntil`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createFetchWebhookHandler,
  type WebhookEvent,
  type WebhookHandlerOptions,
} from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import {
  asMessage,
  post,
  recordingLogger,
  serveFetch,
  textEvent,
  trackUnhandledRejections,
} from './support.js';

const unhandled = trackUnhandledRejections();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  expect(unhandled).toEqual([]);
});

/** A promise the test settles itself. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** A Worker's `ctx` as far as the handler uses it: `waitUntil` reads `this`, as workerd's does. */
function workerContext() {
  return {
    handed: [] as Promise<unknown>[],
    waitUntil(promise: Promise<unknown>) {
      this.handed.push(promise);
    },
  };
}

/** Serves the handler, each request given `ctx` (a Worker's way: `handler(request, ctx)`). */
async function start(options: WebhookHandlerOptions<Request>, ctx = workerContext()) {
  const handler = createFetchWebhookHandler(options);
  const server = await serveFetch((request) => handler(request, ctx));
  closers.push(server.close);
  return { url: `${server.url}/oa-webhook`, ctx };
}

/** Waits (bounded) for everything handed to the context's `waitUntil`; none of it may reject. */
async function drained(ctx: ReturnType<typeof workerContext>) {
  const outcome = await settleWithin(Promise.all(ctx.handed), 5_000, 'the work handed to waitUntil');
  expect(outcome.ok, 'no promise handed to waitUntil rejects').toBe(true);
}

/** One delivery, answered within 5 s or the test fails. */
async function deliver(url: string, body: unknown) {
  const outcome = await settleWithin(post(url, body), 5_000, 'the answer');
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

const MSG_KEY = (seq: number) => `${seq}_2837546_1557481126`;

describe('fetch handler with store and a per-request waitUntil', () => {
  it('answers 200 once the event is stored, while onEvent is still pending; onEvent then runs', async () => {
    const stored: string[] = [];
    const processed: string[] = [];
    const onEventGate = gate();
    let onEventStarted = false;
    const { url, ctx } = await start({
      store: async (event) => {
        stored.push(String(asMessage(event).data.MsgKey));
      },
      onEvent: async (event, context) => {
        onEventStarted = true;
        expect(typeof context.waitUntil).toBe('function');
        await onEventGate.opened;
        processed.push(String(asMessage(event).data.MsgKey));
      },
    });
    try {
      expect(await deliver(url, textEvent('hi', 1))).toMatchObject({ status: 200, json: { ok: true } });
      expect(stored).toEqual([MSG_KEY(1)]);
      expect(onEventStarted).toBe(true);
      expect(processed).toEqual([]);
      expect(ctx.handed).toHaveLength(1);
    } finally {
      onEventGate.open();
    }
    await drained(ctx);
    expect(processed).toEqual([MSG_KEY(1)]);
  });

  it('answers 500 when store fails, without onEvent, and stores the redelivery', async () => {
    let storeFails = true;
    const stored: WebhookEvent[] = [];
    const processed: WebhookEvent[] = [];
    const { lines, logger } = recordingLogger();
    const { url, ctx } = await start({
      logger,
      store: async (event) => {
        if (storeFails) throw new Error('queue unavailable');
        stored.push(event);
      },
      onEvent: (event) => {
        processed.push(event);
      },
    });
    expect(await deliver(url, textEvent('hi', 2))).toMatchObject({
      status: 500,
      json: { error: 'Internal error' },
    });
    expect(lines).toContainEqual({ level: 'error', message: 'oa-messaging webhook: store threw (500)' });
    expect([stored, processed, ctx.handed]).toEqual([[], [], []]);
    storeFails = false;
    expect((await deliver(url, textEvent('hi', 2))).status).toBe(200);
    await drained(ctx);
    expect([stored.length, processed.length]).toEqual([1, 1]);
  });

  it('logs an onEvent failure after the answer with the event key, and hands the platform no rejection', async () => {
    const errors: { message: string; details: Record<string, unknown> | undefined }[] = [];
    const { url, ctx } = await start({
      logger: { error: (message, details) => errors.push({ message, details }) },
      store: () => undefined,
      onEvent: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('reply failed');
      },
    });
    expect(await deliver(url, textEvent('hi', 3))).toMatchObject({ status: 200, json: { ok: true } });
    await drained(ctx);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.message).toBe('oa-messaging webhook: onEvent failed after the answer');
    expect(errors[0]?.details).toMatchObject({ msgKey: MSG_KEY(3), error: { message: 'reply failed' } });
  });

  it('with dedupe, stores and processes a redelivered event once, also while the first is in onEvent', async () => {
    let stores = 0;
    let calls = 0;
    const onEventGate = gate();
    const { url, ctx } = await start({
      dedupe: true,
      store: async () => {
        stores++;
      },
      onEvent: async () => {
        calls++;
        await onEventGate.opened;
      },
    });
    try {
      expect(await deliver(url, textEvent('hi', 4))).toMatchObject({ status: 200, json: { ok: true } });
      // The first delivery's onEvent is still pending: the stored event is done all the same.
      expect(await deliver(url, textEvent('hi', 4))).toMatchObject({
        status: 200,
        json: { ok: true, duplicate: true },
      });
    } finally {
      onEventGate.open();
    }
    await drained(ctx);
    expect(await deliver(url, textEvent('hi', 4))).toMatchObject({ json: { ok: true, duplicate: true } });
    expect([stores, calls, ctx.handed.length]).toEqual([1, 1, 1]);
  });

  it('with dedupe, a duplicate that comes while store runs waits for it; a failed store is stored by the next', async () => {
    const storeGate = gate();
    let stores = 0;
    let failNext = false;
    const processed: string[] = [];
    const { url, ctx } = await start({
      dedupe: true,
      store: async () => {
        stores++;
        if (failNext) {
          failNext = false;
          throw new Error('KV write failed');
        }
        await storeGate.opened;
      },
      onEvent: (event) => {
        processed.push(String(asMessage(event).data.MsgKey));
      },
    });
    const first = deliver(url, textEvent('hi', 5));
    try {
      await expect.poll(() => stores, { timeout: 5_000 }).toBe(1);
      const again = deliver(url, textEvent('hi', 5));
      await new Promise((resolve) => setTimeout(resolve, 50));
      storeGate.open();
      const answers = await settleWithin(Promise.all([first, again]), 5_000, 'both deliveries');
      expect(answers.ok && answers.value.map((a) => a.json)).toEqual([
        { ok: true },
        { ok: true, duplicate: true },
      ]);
    } finally {
      storeGate.open();
    }
    failNext = true;
    expect((await deliver(url, textEvent('hi', 6))).status).toBe(500);
    expect((await deliver(url, textEvent('hi', 6))).json).toEqual({ ok: true });
    await drained(ctx);
    expect(stores).toBe(3);
    expect(processed).toEqual([MSG_KEY(5), MSG_KEY(6)]);
  });
});

describe('fetch handler without a waitUntil', () => {
  it('keeps the answer waiting for onEvent, and a second argument without waitUntil changes nothing', async () => {
    const onEventGate = gate();
    const contexts: unknown[] = [];
    const handler = createFetchWebhookHandler({
      onEvent: async (_event, context) => {
        contexts.push(context.waitUntil);
        await onEventGate.opened;
      },
    });
    // @hono/node-server calls the handler with its bindings as the second argument, as Bun and Deno do
    // with theirs.
    const server = await serveFetch(handler);
    closers.push(server.close);
    const answer = post(`${server.url}/oa-webhook`, textEvent('hi', 7));
    try {
      const early = await Promise.race([
        answer.then(() => 'answered'),
        new Promise((resolve) => setTimeout(() => resolve('waiting'), 150)),
      ]);
      expect(early).toBe('waiting');
    } finally {
      onEventGate.open();
    }
    const answered = await settleWithin(answer, 5_000, 'the answer');
    expect(answered.ok && answered.value.status).toBe(200);
    expect(contexts).toEqual([undefined]);
  });

  it('with store: stores, runs onEvent, then answers; an onEvent failure is logged and answered 200', async () => {
    const order: string[] = [];
    const { lines, logger } = recordingLogger();
    const handler = createFetchWebhookHandler({
      logger,
      store: () => {
        order.push('store');
      },
      onEvent: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push('onEvent');
        throw new Error('reply failed');
      },
    });
    const server = await serveFetch((request) => handler(request));
    closers.push(server.close);
    expect(await deliver(`${server.url}/oa-webhook`, textEvent('hi', 8))).toMatchObject({
      status: 200,
      json: { ok: true },
    });
    expect(order).toEqual(['store', 'onEvent']);
    expect(lines).toContainEqual({
      level: 'error',
      message: 'oa-messaging webhook: onEvent failed after the event was stored',
    });
  });
});
