import { describe, expect, expectTypeOf, it } from 'vitest';
import { items, type MessageItem, MessageItemSchema } from '../src/index.js';

const UUID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';

describe('items', () => {
  it('build exactly the wire shape of each item type', () => {
    expect(items.text('Hello')).toEqual({ type: 'message', msg: 'Hello' });
    expect(items.text('Hello', 'Short')).toEqual({ type: 'message', msg: 'Hello', desc: 'Short' });
    expect(items.image('https://c.example/a.png')).toEqual({ type: 'image', msg: 'https://c.example/a.png' });
    expect(items.imageLink('https://c.example/a.png', 'https://example.com')).toEqual({
      type: 'oa_image_link',
      msg: 'https://c.example/a.png',
      link: 'https://example.com',
    });
    expect(items.flex({ type: 'bubble' })).toEqual({ type: 'flex', msg: '{"type":"bubble"}' });
    expect(items.flex('{"type":"bubble"}')).toEqual({ type: 'flex', msg: '{"type":"bubble"}' });
    expect(items.video(UUID)).toEqual({ type: 'video', msg: UUID });
    expect(
      items.audio({
        audio_url: 'https://s.example/a.mp3',
        audio_uuid: UUID,
        audio_size: 10,
        audio_duration: 2,
      }),
    ).toEqual({
      type: 'audio',
      msg: 'https://s.example/a.mp3',
      audio_uuid: UUID,
      audio_size: 10,
      audio_duration: 2,
    });
  });

  it('every built item passes the item schema', () => {
    for (const item of [
      items.text('Hello'),
      items.image('https://c.example/a.png'),
      items.imageLink('https://c.example/a.png', 'https://example.com'),
      items.flex({ a: 1 }),
      items.video(UUID),
      items.audio({
        audio_url: 'https://s.example/a.mp3',
        audio_uuid: UUID,
        audio_size: 10,
        audio_duration: 2,
      }),
    ]) {
      expect(MessageItemSchema.safeParse(item).success).toBe(true);
    }
  });

  it('MessageItem is a discriminated union: a wrong item does not compile', () => {
    expectTypeOf<Extract<MessageItem, { type: 'oa_image_link' }>>().toHaveProperty('link');
    // @ts-expect-error an oa_image_link item needs its link
    const missingLink: MessageItem = { type: 'oa_image_link', msg: 'https://c.example/a.png' };
    // @ts-expect-error an audio item needs the upload's values
    const missingAudio: MessageItem = { type: 'audio', msg: 'https://s.example/a.mp3' };
    // @ts-expect-error there is no such item type
    const unknownType: MessageItem = { type: 'sticker', msg: 'x' };
    expect([missingLink, missingAudio, unknownType]).toHaveLength(3);
  });
});
