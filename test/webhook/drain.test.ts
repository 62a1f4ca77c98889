/**
 * Answer-first on long-running servers: `waitUntil: true` makes the handler keep the work after the
 * answer itself, and `handler.close()` drains it (bounded) and refuses new deliveries with 503. The
 * node handler on node:http on loopback; the fetch handler served by @hono/node-server, given a second
 * argument without `waitUntil` as Bun's server is.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OAConfigError } from '../../src/index.js';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { listen, post, recordingLogger, serveFetch, textEvent, trackUnhandledRejections } from './support.js';

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

/** An answer-first node handler on loopback whose `onEvent` waits for `held` before it finishes. */
async function answerFirstServer(held: Promise<void>) {
  const stored: WebhookEvent[] = [];
  const steps: string[] = [];
  const { lines, logger } = recordingLogger();
  const handler = createWebhookHandler({
    waitUntil: true,
    store: (event) => {
      stored.push(event);
    },
    onEvent: async () => {
      steps.push('onEvent started');
      await held;
      steps.push('onEvent finished');
    },
    logger,
  });
  const server = await listen(handler);
  closers.push(server.close);
  return { handler, url: `${server.url}/oa/webhook`, stored, steps, lines };
}

/** Waits (bounded) until `steps` has `step`. */
async function reached(steps: string[], step: string) {
  const until = performance.now() + 5_000;
  while (!steps.includes(step) && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
  expect(steps).toContain(step);
}

describe('waitUntil: true on a long-running server', () => {
  it('answers 200 before onEvent finishes, and close() waits for onEvent', async () => {
    const held = gate();
    const app = await answerFirstServer(held.opened);
    const answered = await settleWithin(post(app.url, textEvent('hi')), 5_000, 'the answer');
    expect(answered.ok && answered.value).toMatchObject({ status: 200, json: { ok: true } });
    await reached(app.steps, 'onEvent started');
    expect(app.stored).toHaveLength(1);
    expect(app.steps).toEqual(['onEvent started']);

    let closed = false;
    const closing = app.handler.close({ timeoutMs: 5_000 }).then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed, 'close() waits while onEvent runs').toBe(false);
    held.open();
    const drained = await settleWithin(closing, 5_000, 'close()');
    expect(drained.ok).toBe(true);
    expect(app.steps).toEqual(['onEvent started', 'onEvent finished']);
    expect(app.lines.filter((line) => line.level === 'error')).toEqual([]);
  });

  it('gives up at timeoutMs with onEvent still running, and logs what it left', async () => {
    const held = gate();
    const app = await answerFirstServer(held.opened);
    try {
      expect((await post(app.url, textEvent('slow'))).status).toBe(200);
      await reached(app.steps, 'onEvent started');
      const closed = await settleWithin(app.handler.close({ timeoutMs: 100 }), 5_000, 'close()');
      expect(closed.ok).toBe(true);
      expect(app.steps).toEqual(['onEvent started']);
      expect(app.lines.filter((line) => line.level === 'error')).toEqual([
        {
          level: 'error',
          message:
            'oa-messaging webhook: close gave up after 100 ms: 0 delivery(ies) and 1 piece(s) of work handed to waitUntil still running',
        },
      ]);
    } finally {
      held.open();
    }
  });

  it('answers 503 with Retry-After to deliveries that arrive while it closes, and after', async () => {
    const held = gate();
    const app = await answerFirstServer(held.opened);
    expect((await post(app.url, textEvent('first', 1))).status).toBe(200);
    await reached(app.steps, 'onEvent started');
    const closing = app.handler.close({ timeoutMs: 5_000 });
    const during = await post(app.url, textEvent('during', 2));
    expect(during).toMatchObject({ status: 503, json: { error: 'The receiver is shutting down' } });
    expect(during.headers.get('retry-after')).toBe('1');
    held.open();
    expect((await settleWithin(closing, 5_000, 'close()')).ok).toBe(true);
    expect((await post(app.url, textEvent('after', 3))).status).toBe(503);
    expect(app.stored, 'refused deliveries are not stored').toHaveLength(1);
    expect(app.handler.close(), 'a second close() is the first one').toBe(closing);
    expect(app.lines).toContainEqual({
      level: 'warn',
      message: 'oa-messaging webhook: the handler is closing (503)',
    });
  });

  it('waits for a delivery still in store when close() is called', async () => {
    const held = gate();
    let storing = false;
    const handler = createWebhookHandler({
      waitUntil: true,
      store: async () => {
        storing = true;
        await held.opened;
      },
      onEvent: () => {},
    });
    const server = await listen(handler);
    closers.push(server.close);
    const answer = post(`${server.url}/oa/webhook`, textEvent('storing'));
    const until = performance.now() + 5_000;
    while (!storing && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
    expect(storing).toBe(true);
    let closed = false;
    const closing = handler.close({ timeoutMs: 5_000 }).then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(false);
    held.open();
    const answered = await settleWithin(answer, 5_000, 'the delivery in store');
    expect(answered.ok && answered.value.status).toBe(200);
    expect((await settleWithin(closing, 5_000, 'close()')).ok).toBe(true);
  });

  it('drains the fetch handler too, called with a second argument without waitUntil (as Bun does)', async () => {
    const held = gate();
    const steps: string[] = [];
    const handler = createFetchWebhookHandler({
      waitUntil: true,
      store: () => {},
      onEvent: async () => {
        steps.push('onEvent started');
        await held.opened;
        steps.push('onEvent finished');
      },
    });
    const bunServer = { port: 0, stop() {} };
    const server = await serveFetch((request) => handler(request, bunServer));
    closers.push(server.close);
    expect((await post(`${server.url}/oa/webhook`, textEvent('hi'))).status).toBe(200);
    await reached(steps, 'onEvent started');
    const closing = handler.close({ timeoutMs: 5_000 });
    expect((await post(`${server.url}/oa/webhook`, textEvent('late', 2))).status).toBe(503);
    held.open();
    expect((await settleWithin(closing, 5_000, 'close()')).ok).toBe(true);
    expect(steps).toEqual(['onEvent started', 'onEvent finished']);
  });

  it('refuses a waitUntil that is neither a function nor true, and a close() timeout that is no duration', async () => {
    expect(() => createWebhookHandler({ onEvent: () => {}, waitUntil: 'yes' as never })).toThrow(
      OAConfigError,
    );
    const handler = createWebhookHandler({ onEvent: () => {} });
    const error = await rejectsWithin(handler.close({ timeoutMs: -1 }), 1_000, 'close()');
    expect(error).toBeInstanceOf(OAConfigError);
    expect((await settleWithin(handler.close(), 1_000, 'close()')).ok, 'still open, then closes').toBe(true);
  });
});
