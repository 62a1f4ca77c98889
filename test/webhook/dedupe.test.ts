import { describe, expect, it } from 'vitest';
import { dedupeKeyOf } from '../../src/webhook/dedupe.js';
import { MemoryDedupeStore, parseWebhookEvent } from '../../src/webhook/index.js';
import { eventWith } from './support.js';

describe('MemoryDedupeStore', () => {
  it('claims a key once until it is done, remembers it for ttlMs, then forgets it', () => {
    let now = 1_000;
    const store = new MemoryDedupeStore({ now: () => now });
    expect(store.claim('a', 'first', 50)).toBe('claimed');
    expect(store.claim('a', 'second', 50)).toBe('in-flight');
    store.complete('a', 'first', 100);
    now += 99;
    expect(store.claim('a', 'third', 50)).toBe('done');
    now += 1;
    expect(store.claim('a', 'third', 50)).toBe('claimed');
  });

  it('lets a claim that was never completed expire after claimTtlMs (its holder may have died)', () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    expect(store.claim('a', 'dead', 50)).toBe('claimed');
    now += 50;
    expect(store.claim('a', 'alive', 50)).toBe('claimed');
    // The late holder's release must not free the new holder's claim.
    store.release('a', 'dead');
    expect(store.claim('a', 'other', 50)).toBe('in-flight');
  });

  it("extends only its owner's live claim: not another's, not an expired one, not a done key", () => {
    let now = 0;
    const store = new MemoryDedupeStore({ now: () => now });
    expect(store.claim('a', 'first', 50)).toBe('claimed');
    now += 40;
    expect(store.extend('a', 'other', 50)).toBe(false);
    expect(store.extend('a', 'first', 50)).toBe(true);
    now += 40; // 80: past the first 50 ms, within the extended 90
    expect(store.claim('a', 'second', 50)).toBe('in-flight');
    now += 10;
    expect(store.extend('a', 'first', 50)).toBe(false); // expired at 90
    expect(store.claim('a', 'second', 50)).toBe('claimed');
    store.complete('a', 'second', 1_000);
    expect(store.extend('a', 'second', 50)).toBe(false);
    expect(store.claim('a', 'third', 50)).toBe('done');
    expect(store.extend('missing', 'first', 50)).toBe(false);
  });

  it('forgets the least recently used key past max', () => {
    const store = new MemoryDedupeStore({ max: 2 });
    store.complete('a', 'x', 1_000);
    store.complete('b', 'x', 1_000);
    expect(store.claim('a', 'y', 1_000)).toBe('done'); // a is now the most recent
    store.complete('c', 'x', 1_000); // evicts b
    expect(store.size).toBe(2);
    expect(store.claim('b', 'y', 1_000)).toBe('claimed');
  });

  it('release by the holder lets the key be claimed again', () => {
    const store = new MemoryDedupeStore();
    store.claim('a', 'first', 1_000);
    store.release('a', 'first');
    expect(store.claim('a', 'second', 1_000)).toBe('claimed');
  });
});

describe('dedupeKeyOf', () => {
  const text = [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'x' } }];

  it('uses MsgKey, else MsgId, else MsgSeq/MsgRandom/MsgTime', () => {
    const withKey = parseWebhookEvent(eventWith(text, 5));
    const withId = parseWebhookEvent(eventWith(text, 5, { MsgKey: undefined, MsgId: 'id-1' }));
    const parts = parseWebhookEvent(eventWith(text, 5, { MsgKey: undefined }));
    expect(dedupeKeyOf(withKey)).toContain('5_2837546_1557481126');
    expect(dedupeKeyOf(withId)).toContain('id-1');
    expect(dedupeKeyOf(parts)).toBe(dedupeKeyOf(withKey));
  });

  it('an empty MsgKey does not hide the MsgId', () => {
    const event = parseWebhookEvent(eventWith(text, 5, { MsgKey: '', MsgId: 'id-2' }));
    expect(dedupeKeyOf(event)).toContain('id-2');
  });

  it('is undefined when nothing identifies the message', () => {
    const event = parseWebhookEvent(
      eventWith(text, 5, { MsgKey: undefined, MsgSeq: undefined, MsgRandom: undefined, MsgTime: undefined }),
    );
    expect(dedupeKeyOf(event)).toBeUndefined();
  });

  it('differs between OA accounts and senders', () => {
    const a = parseWebhookEvent(eventWith(text, 5));
    const b = parseWebhookEvent({ ...eventWith(text, 5), username: 'other_oa' });
    const c = parseWebhookEvent(eventWith(text, 5, { From_Account: 'someone_else' }));
    expect(new Set([dedupeKeyOf(a), dedupeKeyOf(b), dedupeKeyOf(c)]).size).toBe(3);
  });
});
