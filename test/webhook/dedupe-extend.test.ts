/**
 * A claim lives as long as its delivery: an onEvent slower than claimTtlMs keeps its message, so a
 * redelivery waits for it instead of running onEvent a second time; a claim nobody extends (its holder
 * died) is still taken over after claimTtlMs. In-memory store, through both handlers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { dedupeKeyOf } from '../../src/webhook/dedupe.js';
import { MemoryDedupeStore, parseWebhookEvent } from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { type Driver, drivers } from './drivers.js';
import { recordingLogger, slowFirstDelivery, textEvent, trackUnhandledRejections } from './support.js';

const unhandled = trackUnhandledRejections();

describe.each(Object.entries(drivers))('%s', (_name, start) => {
  let driver: Driver | undefined;
  afterEach(async () => {
    await driver?.close();
    driver = undefined;
    expect(unhandled).toEqual([]);
  });

  const body = JSON.stringify(textEvent('slow downstream', 9));

  it('an onEvent of 1.5 s with claimTtlMs 300: a redelivery at 800 ms waits, onEvent runs once', async () => {
    const slow = slowFirstDelivery(1_500);
    const { lines, logger } = recordingLogger();
    driver = await start({ logger, dedupe: { claimTtlMs: 300 }, onEvent: slow.onEvent });
    const send = () => driver!.send('POST', body);
    const { first, again, calls } = await slow.redeliver(send, send, 800);
    expect(first).toMatchObject({ status: 200, json: { ok: true } });
    expect(again).toMatchObject({ status: 200, json: { ok: true, duplicate: true } });
    expect(calls).toBe(1);
    expect(lines.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
  });

  it('a claim that nobody extends (its holder died) is taken over after claimTtlMs', async () => {
    const store = new MemoryDedupeStore();
    const key = dedupeKeyOf(parseWebhookEvent(body));
    expect(key).toBeDefined();
    expect(store.claim(key!, 'a delivery whose process died', 300)).toBe('claimed');
    let calls = 0;
    driver = await start({ dedupe: { store, claimTtlMs: 300 }, onEvent: () => void calls++ });
    const answer = await settleWithin(driver.send('POST', body), 5_000, 'the redelivery');
    expect(answer).toMatchObject({ ok: true, value: { status: 200, json: { ok: true } } });
    expect(calls).toBe(1);
    expect(store.claim(key!, 'later', 300)).toBe('done');
  });
});
