import { describe, expect, it } from 'vitest';
import { DedupeCache, dedupeKeyOf } from '../../src/webhook/dedupe.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { eventWith } from './support.js';

describe('DedupeCache', () => {
  it('claims a key once within its TTL, again after it', () => {
    let now = 1_000;
    const cache = new DedupeCache({ ttlMs: 100 }, () => now);
    expect(cache.claim('a')).toBe(true);
    now += 99;
    expect(cache.claim('a')).toBe(false);
    now += 1;
    expect(cache.claim('a')).toBe(true);
  });

  it('forgets the least recently used key past max', () => {
    const cache = new DedupeCache({ max: 2, ttlMs: 1_000 });
    cache.claim('a');
    cache.claim('b');
    expect(cache.claim('a')).toBe(false); // a is now the most recent
    cache.claim('c'); // evicts b
    expect(cache.size).toBe(2);
    expect(cache.claim('b')).toBe(true);
    expect(cache.claim('c')).toBe(false);
  });

  it('release lets the key be claimed again', () => {
    const cache = new DedupeCache();
    cache.claim('a');
    cache.release('a');
    expect(cache.claim('a')).toBe(true);
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
