/**
 * `waitUntil` without answer-first: `context.waitUntil` in `onEvent`, the handler-level option on both
 * handlers (the node one over node:http on loopback), the per-request context winning over it, and
 * the options refused at creation.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OAConfigError } from '../../src/index.js';
import { createFetchWebhookHandler, createWebhookHandler, type WaitUntil } from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { drivers } from './drivers.js';
import { post, recordingLogger, serveFetch, textEvent, trackUnhandledRejections } from './support.js';

const unhandled = trackUnhandledRejections();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  expect(unhandled).toEqual([]);
});

/** A `waitUntil` that keeps what it is handed, for the test to wait on (bounded). */
function collecting() {
  const handed: Promise<unknown>[] = [];
  const waitUntil: WaitUntil = (promise) => {
    handed.push(promise);
  };
  const drained = async () => {
    const outcome = await settleWithin(Promise.all(handed), 5_000, 'the work handed to waitUntil');
    expect(outcome.ok, 'no promise handed to waitUntil rejects').toBe(true);
  };
  return { handed, waitUntil, drained };
}

describe('context.waitUntil', () => {
  it('lets onEvent hand slow work to the platform: the answer waits for onEvent, not for that work', async () => {
    const platform = collecting();
    let slowDone = false;
    let release = () => {};
    const slow = new Promise<void>((resolve) => {
      release = resolve;
    }).then(() => {
      slowDone = true;
    });
    const handler = createFetchWebhookHandler({
      onEvent: (_event, context) => context.waitUntil?.(slow),
    });
    const server = await serveFetch((request) => handler(request, platform));
    closers.push(server.close);
    try {
      const answered = await settleWithin(post(`${server.url}/hook`, textEvent('hi')), 5_000, 'the answer');
      expect(answered.ok && answered.value.status).toBe(200);
      expect([slowDone, platform.handed.length]).toEqual([false, 1]);
    } finally {
      release();
    }
    await platform.drained();
    expect(slowDone).toBe(true);
  });

  it('logs a rejection of the work handed over, with the event key, and passes the platform none', async () => {
    const platform = collecting();
    const errors: { message: string; details: Record<string, unknown> | undefined }[] = [];
    const handler = createFetchWebhookHandler({
      logger: { error: (message, details) => errors.push({ message, details }) },
      onEvent: (_event, context) => context.waitUntil?.(Promise.reject(new Error('reply failed'))),
    });
    const response = await handler(
      new Request('http://x/hook', { method: 'POST', body: JSON.stringify(textEvent('hi', 2)) }),
      platform,
    );
    expect(response.status).toBe(200);
    await platform.drained();
    expect(errors).toEqual([
      {
        message: 'oa-messaging webhook: work handed to waitUntil failed after the answer',
        details: expect.objectContaining({ msgKey: '2_2837546_1557481126' }),
      },
    ]);
  });

  it('gives the request its own waitUntil over the option, and survives a waitUntil that throws', async () => {
    const option = collecting();
    const perRequest = collecting();
    const { lines, logger } = recordingLogger();
    let stored = 0;
    const handler = createFetchWebhookHandler({
      waitUntil: option.waitUntil,
      logger,
      store: () => {
        stored++;
      },
      onEvent: () => undefined,
    });
    const request = (seq: number) =>
      new Request('http://x/hook', { method: 'POST', body: JSON.stringify(textEvent('hi', seq)) });
    expect((await handler(request(3), perRequest)).status).toBe(200);
    expect((await handler(request(4))).status).toBe(200);
    expect([perRequest.handed.length, option.handed.length]).toEqual([1, 1]);
    const throwing = {
      waitUntil: () => {
        throw new Error('called after the response');
      },
    };
    expect((await handler(request(5), throwing)).status).toBe(200);
    expect(lines).toContainEqual({ level: 'error', message: 'oa-messaging webhook: waitUntil threw' });
    expect(stored).toBe(3);
    await Promise.all([option.drained(), perRequest.drained()]);
  });
});

describe.each(Object.entries(drivers))('the waitUntil option, %s', (_name, startDriver) => {
  it('answers once stored; onEvent runs in waitUntil', async () => {
    const platform = collecting();
    const events: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const driver = await startDriver({
      waitUntil: platform.waitUntil,
      store: () => {
        events.push('stored');
      },
      onEvent: async () => {
        await held;
        events.push('processed');
      },
    });
    closers.push(driver.close);
    try {
      const answered = await settleWithin(
        driver.send('POST', JSON.stringify(textEvent('hi'))),
        5_000,
        'the answer',
      );
      expect(answered.ok && answered.value.status).toBe(200);
      expect(events).toEqual(['stored']);
    } finally {
      release();
    }
    await platform.drained();
    expect(events).toEqual(['stored', 'processed']);
  });
});

describe('options', () => {
  it('refuses a store or a waitUntil that is not a function, at creation', () => {
    const onEvent = () => undefined;
    expect(() => createFetchWebhookHandler({ onEvent, store: 'kv' as never })).toThrow(OAConfigError);
    expect(() => createWebhookHandler({ onEvent, waitUntil: {} as never })).toThrow(
      /waitUntil must be a function/,
    );
  });
});
