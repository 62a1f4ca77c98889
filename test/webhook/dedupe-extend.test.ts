/**
 * A claim lives as long as its delivery: an onEvent slower than claimTtlMs keeps its message, so a
 * redelivery waits for it instead of running onEvent a second time; a claim nobody extends (its holder
 * died) is still taken over after claimTtlMs. In-memory store, through both handlers.
 */
import { expect, it } from 'vitest';
import { OAConfigError } from '../../src/errors.js';
import { dedupeKeyOf } from '../../src/webhook/dedupe.js';
import {
  createWebhookHandler,
  MemoryDedupeStore,
  parseWebhookEvent,
  type WebhookDedupeStore,
} from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { eachDriver } from './drivers.js';
import { recordingLogger, slowFirstDelivery, textEvent, trackUnhandledRejections } from './support.js';

const unhandled = trackUnhandledRejections();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A store written against the interface before `extend`: claim, complete and release of `memory`. */
const withoutExtend = (memory: MemoryDedupeStore): WebhookDedupeStore => ({
  claim: (key, owner, ttl) => memory.claim(key, owner, ttl),
  complete: (key, owner, ttl) => memory.complete(key, owner, ttl),
  release: (key, owner) => memory.release(key, owner),
});

eachDriver(unhandled, (start) => {
  const body = JSON.stringify(textEvent('slow downstream', 9));

  it('an onEvent of 1.5 s with claimTtlMs 300: a redelivery at 800 ms waits, onEvent runs once', async () => {
    const slow = slowFirstDelivery(1_500);
    const { lines, logger } = recordingLogger();
    const driver = await start({ logger, dedupe: { claimTtlMs: 300 }, onEvent: slow.onEvent });
    const send = () => driver.send('POST', body);
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
    const driver = await start({ dedupe: { store, claimTtlMs: 300 }, onEvent: () => void calls++ });
    const answer = await settleWithin(driver.send('POST', body), 5_000, 'the redelivery');
    expect(answer).toMatchObject({ ok: true, value: { status: 200, json: { ok: true } } });
    expect(calls).toBe(1);
    expect(store.claim(key!, 'later', 300)).toBe('done');
  });

  it('an extend that throws is logged like the other store failures and costs no answer; it stops with onEvent', async () => {
    const { lines, logger } = recordingLogger();
    let extendCalls = 0;
    const store: WebhookDedupeStore = {
      ...withoutExtend(new MemoryDedupeStore()),
      extend: async () => {
        extendCalls++;
        throw new Error('redis is down');
      },
    };
    let calls = 0;
    const driver = await start({
      logger,
      dedupe: { store, claimTtlMs: 60 },
      onEvent: async () => {
        calls++;
        await sleep(200);
      },
    });
    const answer = await settleWithin(driver.send('POST', body), 5_000, 'the delivery');
    expect(answer).toMatchObject({ ok: true, value: { status: 200, json: { ok: true } } });
    expect(calls).toBe(1);
    // Tried every 20 ms during 200 ms, again after each failure.
    expect(extendCalls).toBeGreaterThanOrEqual(2);
    const errors = lines.filter((line) => line.level === 'error').map((line) => line.message);
    expect(new Set(errors)).toEqual(
      new Set(['oa-messaging webhook: the dedupe store failed to extend a claim']),
    );
    // No timer left behind: no extend once the delivery ended.
    const after = extendCalls;
    await sleep(100);
    expect(extendCalls).toBe(after);
  });

  it('an extend that hangs is not called again until it answers: calls to a slow store never pile up', async () => {
    let extendCalls = 0;
    const store: WebhookDedupeStore = {
      ...withoutExtend(new MemoryDedupeStore()),
      extend: () => {
        extendCalls++;
        return new Promise<boolean>(() => {});
      },
    };
    const driver = await start({
      dedupe: { store, claimTtlMs: 60 },
      onEvent: async () => {
        await sleep(300);
      },
    });
    const answer = await settleWithin(driver.send('POST', body), 5_000, 'the delivery');
    expect(answer).toMatchObject({ ok: true, value: { status: 200 } });
    // Due every 20 ms for 300 ms, but the first never answered.
    expect(extendCalls).toBe(1);
  });

  it('a store without extend still works; an extend that is not a method is refused', async () => {
    const store = withoutExtend(new MemoryDedupeStore());
    let calls = 0;
    const driver = await start({ dedupe: { store, claimTtlMs: 300 }, onEvent: () => void calls++ });
    expect((await driver.send('POST', body)).json).toEqual({ ok: true });
    expect((await driver.send('POST', body)).json).toEqual({ ok: true, duplicate: true });
    expect(calls).toBe(1);
    const wrong = { ...store, extend: 'yes' } as unknown as WebhookDedupeStore;
    expect(() => createWebhookHandler({ onEvent: () => {}, dedupe: { store: wrong } })).toThrow(
      OAConfigError,
    );
  });
});
