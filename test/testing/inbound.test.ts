import { afterEach, describe, expect, it } from 'vitest';
import { buildInboundEvent, createMockServer, sendInboundMessage } from '../../src/testing/index.js';
import {
  createWebhookHandler,
  getMessageMedia,
  getMessageText,
  isMessageEvent,
  parseWebhookEvent,
  type WebhookMessageEvent,
} from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';

let closeReceiver: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeReceiver?.();
  closeReceiver = undefined;
});

/** A user's receiver: createWebhookHandler on node:http, collecting what arrives. */
async function receiver(options: { dedupe?: boolean } = {}) {
  const events: WebhookMessageEvent[] = [];
  const handler = createWebhookHandler({
    onEvent: (event) => {
      if (!isMessageEvent(event)) throw new Error(`not a message event: ${event.event_type}`);
      events.push(event);
    },
    dedupe: options.dedupe ?? false,
  });
  const server = await listen((req, res) => void handler(req, res));
  closeReceiver = server.close;
  return { url: `${server.url}/oa/webhook`, events };
}

describe('sendInboundMessage', () => {
  it('drives a receiver with text, image, video and sound messages that arrive parsed', async () => {
    const { url, events } = await receiver();
    const answers = [
      await sendInboundMessage(url, 'hello there', { from: 'user_42', to: 'oa_shop' }),
      await sendInboundMessage(url, { type: 'image', width: 640, height: 480, format: 'png' }),
      await sendInboundMessage(url, { type: 'video', seconds: 12 }),
      await sendInboundMessage(url, { type: 'sound', seconds: 4, url: 'https://media.test/voice.m4a' }),
    ];
    for (const answer of answers) expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    expect(events.map((e) => e.data.MsgBody[0]?.MsgType)).toEqual([
      'TIMTextElem',
      'TIMImageElem',
      'TIMVideoFileElem',
      'TIMSoundElem',
    ]);
    const [text, image, video, sound] = events;
    expect(text).toMatchObject({
      event_type: 'message',
      username: 'oa_shop',
      data: { From_Account: 'user_42' },
    });
    expect(getMessageText(text!)).toBe('hello there');
    expect(text!.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const { MsgSeq, MsgRandom, MsgTime, MsgKey } = text!.data;
    expect(MsgKey).toBe(`${MsgSeq}_${MsgRandom}_${MsgTime}`);
    expect(getMessageMedia(image!)[0]).toMatchObject({
      kind: 'image',
      format: 'png',
      width: 640,
      height: 480,
    });
    expect(getMessageMedia(image!, { imageVariant: 'thumbnail' })[0]).toMatchObject({ width: 198 });
    expect(getMessageMedia(video!)[0]).toMatchObject({ kind: 'video', durationSeconds: 12, format: 'mp4' });
    const audio = getMessageMedia(sound!)[0];
    expect(audio).toMatchObject({ kind: 'audio', durationSeconds: 4 });
    // Media URLs carry temporary signed query parameters.
    expect(audio?.url).toMatch(/^https:\/\/media\.test\/voice\.m4a\?sign=[0-9a-f]+&t=\d+$/);
  });

  it('gives each event its own MsgKey; the same key twice is a duplicate to a deduplicating receiver', async () => {
    const { url, events } = await receiver({ dedupe: true });
    await sendInboundMessage(url, 'one');
    await sendInboundMessage(url, 'two');
    const fixed = { msgSeq: 7, msgRandom: 123, msgTime: 1_700_000_000 };
    await sendInboundMessage(url, 'three', fixed);
    const again = await sendInboundMessage(url, 'three', fixed);
    expect(again.body).toEqual({ ok: true, duplicate: true });
    expect(events.map((e) => getMessageText(e))).toEqual(['one', 'two', 'three']);
    expect(events[2]?.data.MsgKey).toBe('7_123_1700000000');
  });

  it('has escape hatches: field overrides, several elements, a raw body', async () => {
    const { url, events } = await receiver();
    await sendInboundMessage(
      url,
      {
        type: 'elements',
        elements: [
          { MsgType: 'TIMTextElem', MsgContent: { Text: 'a' } },
          { MsgType: 'TIMFaceElem', MsgContent: { Index: 1, Data: 'smile' } },
        ],
      },
      { data: { CloudCustomData: 'custom' }, envelope: { username: 'other_oa' } },
    );
    expect(events[0]).toMatchObject({ username: 'other_oa', data: { CloudCustomData: 'custom' } });
    expect(events[0]?.data.MsgBody).toHaveLength(2);
    const broken = await sendInboundMessage(url, { type: 'raw', body: '{"event_type":' });
    expect(broken.status).toBe(400);
    expect(events).toHaveLength(1);
  });

  it('builds events parseWebhookEvent accepts, with the right MsgType', () => {
    const kinds = [
      ['hi', 'TIMTextElem'],
      [{ type: 'image' }, 'TIMImageElem'],
      [{ type: 'video' }, 'TIMVideoFileElem'],
      [{ type: 'audio' }, 'TIMSoundElem'],
    ] as const;
    for (const [message, type] of kinds) {
      const event = parseWebhookEvent(JSON.stringify(buildInboundEvent(message)));
      expect(event).toMatchObject({ issues: [], data: { MsgBody: [{ MsgType: type }] } });
    }
  });

  it('works next to a mock server, which it does not need', async () => {
    const mock = await createMockServer();
    try {
      const { url, events } = await receiver();
      expect((await sendInboundMessage(url, 'ping')).status).toBe(200);
      expect(events).toHaveLength(1);
      expect(mock.requests).toEqual([]);
    } finally {
      await mock.close();
    }
  });
});
