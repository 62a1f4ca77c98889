/**
 * Authentic events whose shape differs from the samples: each gets 200 from both handlers and reaches
 * onEvent once, typed where its fields allow, with `issues` naming what did not match. Before the
 * tolerant reader every one of these but the numbers-as-strings case was answered 400.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  getMessageText,
  isMessageEvent,
  type WebhookEvent,
  type WebhookMessageEvent,
} from '../../src/webhook/index.js';
import { type Driver, drivers } from './drivers.js';
import { CALLBACK_BASE, envelope, eventWith, loadFixture } from './support.js';

const text = (value: string) => ({ MsgType: 'TIMTextElem', MsgContent: { Text: value } });
const paths = (event: WebhookEvent) => event.issues.map((issue) => issue.path.join('.'));
const withoutKey = (data: Record<string, unknown>, key: string) =>
  Object.fromEntries(Object.entries(data).filter(([name]) => name !== key));

interface Variant {
  body: Record<string, unknown>;
  /** The paths `issues` must list, in order. */
  issues: string[];
  check: (event: WebhookMessageEvent) => void;
}

const variants: Record<string, Variant> = {
  "Tencent's group-message callback (GroupId, no To_Account, Random)": {
    body: envelope(loadFixture('tencent-doc-Group.CallbackAfterSendMsg-1.json')),
    issues: [],
    check: (event) => {
      expect(event.data).toMatchObject({ GroupId: '@TGS#2J4SZEAEL', From_Account: 'jared', Random: 123456 });
      expect(event.data.To_Account).toBeUndefined();
      expect(getMessageText(event)).toBe('red packet');
    },
  },
  'data without To_Account': {
    body: envelope({ ...withoutKey(CALLBACK_BASE, 'To_Account'), MsgBody: [text('hi')] }),
    issues: ['data.To_Account'],
    check: (event) => expect(getMessageText(event)).toBe('hi'),
  },
  'data without From_Account': {
    body: envelope({ ...withoutKey(CALLBACK_BASE, 'From_Account'), MsgBody: [text('hi')] }),
    issues: ['data.From_Account'],
    check: (event) => {
      expect(event.data.From_Account).toBeUndefined();
      expect(event.data.To_Account).toBe('oa_shop');
    },
  },
  'a numeric From_Account': {
    body: eventWith([text('hi')], 1, { From_Account: 10042 }),
    issues: [],
    check: (event) => expect(event.data.From_Account).toBe('10042'),
  },
  'data without MsgBody': {
    body: envelope(CALLBACK_BASE),
    issues: ['data.MsgBody'],
    check: (event) => {
      expect(event.data.MsgBody).toEqual([]);
      expect(event.data.MsgKey).toBe(CALLBACK_BASE.MsgKey);
    },
  },
  'one element without MsgContent': {
    body: eventWith([{ MsgType: 'TIMTextElem' }, text('kept')]),
    issues: ['data.MsgBody.0.MsgContent'],
    check: (event) => {
      expect(event.data.MsgBody.map((element) => String(element.MsgType))).toEqual([
        'TIMTextElem (invalid)',
        'TIMTextElem',
      ]);
      expect(getMessageText(event)).toBe('kept');
    },
  },
  'a text element without Text': {
    body: eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Lang: 'th' } }]),
    issues: ['data.MsgBody.0.MsgContent.Text'],
    check: (event) => {
      expect(event.data.MsgBody[0]).toEqual({ MsgType: 'TIMTextElem (invalid)', MsgContent: { Lang: 'th' } });
      expect(getMessageText(event)).toBe('');
    },
  },
  'OfflinePushInfo.Ext as an object': {
    body: eventWith([text('hi')], 1, { OfflinePushInfo: { PushFlag: '0', Title: 'New', Ext: { a: 1 } } }),
    issues: ['data.OfflinePushInfo.Ext'],
    check: (event) => {
      expect(event.data.OfflinePushInfo).toEqual({ PushFlag: 0, Title: 'New' });
      expect(event.raw).toMatchObject({ data: { OfflinePushInfo: { Ext: { a: 1 } } } });
    },
  },
  'timestamp as a number (seconds, milliseconds)': {
    body: envelope({ ...CALLBACK_BASE, MsgBody: [text('hi')] }, { timestamp: 1557481126 }),
    issues: [],
    check: (event) => {
      expect(event.timestamp).toBe('2019-05-10T09:38:46.000Z');
      expect(event.raw.timestamp).toBe(1557481126);
    },
  },
  'MsgSeq, MsgRandom and MsgTime as strings, EventTime as a number': {
    body: eventWith([text('hi')], 1, { MsgSeq: '7', MsgRandom: '12', MsgTime: '1557481126', EventTime: 5 }),
    issues: [],
    check: (event) => {
      expect(event.data).toMatchObject({ MsgSeq: 7, MsgRandom: 12, MsgTime: 1557481126, EventTime: 5 });
      expect(event.raw).toMatchObject({ data: { MsgSeq: '7' } });
    },
  },
};

describe.each(Object.entries(drivers))('%s', (_name, start) => {
  let driver: Driver | undefined;
  afterEach(async () => {
    await driver?.close();
    driver = undefined;
  });

  const receive = async (body: unknown) => {
    const received: WebhookEvent[] = [];
    driver = await start({ onEvent: (event) => void received.push(event), dedupe: true });
    const answer = await driver.send('POST', JSON.stringify(body));
    return { answer, received };
  };

  it.each(Object.entries(variants))(
    '%s: 200, onEvent once, typed, issues listed',
    async (_label, variant) => {
      const { answer, received } = await receive(variant.body);
      expect(answer).toMatchObject({ status: 200, json: { ok: true } });
      expect(received).toHaveLength(1);
      const event = received[0]!;
      expect(paths(event)).toEqual(variant.issues);
      if (!isMessageEvent(event)) throw new Error('expected a message event');
      variant.check(event);
      expect(event.raw).toEqual(variant.body);
    },
  );

  it('a group message redelivered is a duplicate (its key uses Random and GroupId)', async () => {
    const body = JSON.stringify(
      variants["Tencent's group-message callback (GroupId, no To_Account, Random)"]!.body,
    );
    const received: WebhookEvent[] = [];
    driver = await start({ onEvent: (event) => void received.push(event), dedupe: true });
    expect((await driver.send('POST', body)).json).toEqual({ ok: true });
    expect((await driver.send('POST', body)).json).toEqual({ ok: true, duplicate: true });
    expect(received).toHaveLength(1);
  });

  it('an unknown event_type is its own kind of event, its data as it arrived', async () => {
    const body = { event_type: 'follow', username: 'oa_shop', timestamp: '2024-01-01T00:00:00Z', data: [1] };
    const { answer, received } = await receive(body);
    expect(answer.status).toBe(200);
    expect(received).toEqual([{ ...body, issues: [], raw: body }]);
    expect(isMessageEvent(received[0]!)).toBe(false);
  });

  it('an object that is hardly an event still reaches onEvent, with its issues', async () => {
    const { answer, received } = await receive({ hello: 'world' });
    expect(answer.status).toBe(200);
    expect(received[0]).toMatchObject({ event_type: '', data: undefined, hello: 'world' });
    expect(paths(received[0]!)).toEqual(['username', 'timestamp', 'event_type']);
  });
});
