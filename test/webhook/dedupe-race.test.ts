/**
 * Deduplication that cannot drop a message, and handlers that always answer, through both handlers:
 * a duplicate that arrives while the first delivery is in onEvent waits for its outcome; a logger, a
 * verify or a dedupe store that throws never costs an answer.
 */
import { expect, it } from 'vitest';
import { isMessageEvent, type WebhookDedupeStore, type WebhookEvent } from '../../src/webhook/index.js';
import { type Answer, eachDriver } from './drivers.js';
import { asMessage, recordingLogger, textEvent, trackUnhandledRejections } from './support.js';

/** A promise with its resolve, to hold an onEvent until the test lets it go. */
function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

/** Waits until `condition` holds, checking every 5 ms, for at most `ms`. */
async function until(condition: () => boolean, ms = 5000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Resolves to 'pending' when `promise` has not settled within `ms`. */
const stillPending = (promise: Promise<unknown>, ms = 100) =>
  Promise.race([promise.then(() => 'settled'), new Promise((r) => setTimeout(() => r('pending'), ms))]);

const unhandled = trackUnhandledRejections();

eachDriver(unhandled, (start) => {
  const body = JSON.stringify(textEvent('race', 42));

  it('the first onEvent throws while a duplicate waits: the duplicate processes it, each answer true', async () => {
    const held = gate();
    const calls: string[] = [];
    const processed: WebhookEvent[] = [];
    const driver = await start({
      dedupe: true,
      onEvent: async (event) => {
        calls.push('start');
        if (calls.length === 1) {
          await held.opened;
          throw new Error('the database was down');
        }
        processed.push(event);
      },
    });
    const first = driver.send('POST', body);
    await until(() => calls.length === 1);
    const second = driver.send('POST', body);
    // The duplicate neither answers at once nor runs onEvent while the first is in flight.
    expect(await stillPending(second)).toBe('pending');
    expect(calls).toHaveLength(1);

    held.open();
    const answers: Answer[] = await Promise.all([first, second]);
    expect(answers[0]).toMatchObject({ status: 500, json: { error: 'Internal error' } });
    expect(answers[1]).toMatchObject({ status: 200, json: { ok: true } });
    expect(answers[1]?.json.duplicate).toBeUndefined();
    expect(calls).toHaveLength(2);
    expect(processed).toHaveLength(1);
    expect(asMessage(processed[0]).data.MsgSeq).toBe(42);

    // A later redelivery finds it done.
    expect((await driver.send('POST', body)).json).toEqual({ ok: true, duplicate: true });
    expect(calls).toHaveLength(2);
  });

  it('the first onEvent succeeds while a duplicate waits: the duplicate answers 200 duplicate', async () => {
    const held = gate();
    let calls = 0;
    const driver = await start({
      dedupe: true,
      onEvent: async () => {
        calls++;
        await held.opened;
      },
    });
    const first = driver.send('POST', body);
    await until(() => calls === 1);
    const second = driver.send('POST', body);
    expect(await stillPending(second)).toBe('pending');
    held.open();
    expect((await first).json).toEqual({ ok: true });
    expect((await second).json).toEqual({ ok: true, duplicate: true });
    expect(calls).toBe(1);
  });

  it('a duplicate waits at most waitTimeoutMs, then answers 503 so the sender tries again', async () => {
    const held = gate();
    let calls = 0;
    const driver = await start({
      dedupe: { waitTimeoutMs: 150 },
      onEvent: async () => {
        calls++;
        await held.opened;
      },
    });
    const first = driver.send('POST', body);
    await until(() => calls === 1);
    const second = await driver.send('POST', body);
    expect(second.status).toBe(503);
    expect(second.json.error).toMatch(/still being processed/);
    held.open();
    expect((await first).status).toBe(200);
    expect((await driver.send('POST', body)).json).toEqual({ ok: true, duplicate: true });
    expect(calls).toBe(1);
  });

  it('a logger whose every method throws costs no answer', async () => {
    const throwing = () => {
      throw new Error('the log disk is full');
    };
    const logger = { debug: throwing, info: throwing, warn: throwing, error: throwing };
    const driver = await start({
      logger,
      dedupe: true,
      verify: (request) => {
        const header = request instanceof Request ? request.headers.get('x-test') : request.headers['x-test'];
        if (header === 'throw') throw new Error('the allow-list is unreachable');
        return header !== 'deny';
      },
      onEvent: (event) => {
        if (isMessageEvent(event) && event.data.MsgSeq === 500) throw new Error('boom');
      },
    });
    expect((await driver.send('POST', JSON.stringify(textEvent('ok', 1)))).status).toBe(200);
    expect((await driver.send('POST', JSON.stringify(textEvent('ok', 1)))).json.duplicate).toBe(true);
    expect((await driver.send('POST', JSON.stringify({ hello: 1 }))).status).toBe(200); // issues logged
    expect((await driver.send('POST', JSON.stringify(textEvent('boom', 500)))).status).toBe(500);
    expect((await driver.send('POST', '{not json')).status).toBe(400);
    expect((await driver.send('GET')).status).toBe(405);
    expect((await driver.send('POST', '{}', { 'x-test': 'deny' })).status).toBe(401);
    expect((await driver.send('POST', '{}', { 'x-test': 'throw' })).status).toBe(500);
  });

  it('a dedupe store that fails costs deduplication, never the message', async () => {
    const { lines, logger } = recordingLogger();
    const broken: WebhookDedupeStore = {
      claim: async () => {
        throw new Error('redis is down');
      },
      complete: () => {
        throw new Error('redis is down');
      },
      release: async () => undefined,
    };
    let calls = 0;
    const driver = await start({ logger, dedupe: { store: broken }, onEvent: () => void calls++ });
    expect((await driver.send('POST', body)).status).toBe(200);
    expect((await driver.send('POST', body)).status).toBe(200);
    expect(calls).toBe(2);
    expect(lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      'oa-messaging webhook: the dedupe store failed to claim a message',
      'oa-messaging webhook: the dedupe store failed to complete a message',
      'oa-messaging webhook: the dedupe store failed to claim a message',
      'oa-messaging webhook: the dedupe store failed to complete a message',
    ]);
  });
});
