import { describe, expect, it } from 'vitest';
import { OAValidationError } from '../../src/errors.js';
import { type MsgBodyElement, parseWebhookEvent, type WebhookMessageEvent } from '../../src/webhook/index.js';
import { CALLBACK_BASE, envelope, eventWith, fixtureNames, loadFixture, parseMessage } from './support.js';

/**
 * Tencent's fixtures come in several shapes; each becomes a whole webhook body the way the OA service
 * would send it. `undefined` for the one that is not an inbound message at all.
 */
function wrapFixture(name: string): unknown {
  const fixture = loadFixture(name);
  if ('ActionStatus' in fixture) return undefined; // the answer a callback receiver gives Tencent
  if ('CallbackCommand' in fixture) return envelope(fixture); // a whole callback
  if ('MsgType' in fixture) return eventWith([fixture]); // a single element
  if ('MsgBody' in fixture) return envelope({ ...CALLBACK_BASE, ...fixture }); // a MsgBody fragment
  if ('OfflinePushInfo' in fixture) {
    return envelope({
      ...CALLBACK_BASE,
      MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'x' } }],
      ...fixture,
    });
  }
  throw new Error(`no wrapping rule for fixture ${name}`);
}

const parseFixture = (name: string): WebhookMessageEvent => parseMessage(JSON.stringify(wrapFixture(name)));
const firstElement = (name: string): MsgBodyElement => parseFixture(name).data.MsgBody[0]!;

describe('parseWebhookEvent on Tencent fixtures', () => {
  it.each(fixtureNames().filter((name) => !name.includes('callback-response')))('%s parses', (name) => {
    const event = parseFixture(name);
    expect(event.event_type).toBe('message');
    expect(event.data.MsgBody.length).toBeGreaterThan(0);
  });

  it('types a whole C2C callback and keeps unknown fields', () => {
    const event = parseFixture('tencent-doc-C2C.CallbackAfterSendMsg-1.json');
    expect(event.data).toMatchObject({ From_Account: 'jared', To_Account: 'Jonh', MsgTime: 1557481126 });
    expect(event.data.MsgKey).toBe('48374_2837546_1557481126');
    expect(event.data.CloudCustomData).toBe('your cloud custom data');
    expect(event.data.MsgVersion).toBeUndefined(); // Tencent's samples omit it
    const element = event.data.MsgBody[0]!;
    expect(element.MsgType === 'TIMTextElem' && element.MsgContent.Text).toBe('red packet');
  });

  it('types image variants (1 original, 2 large, 3 thumbnail)', () => {
    const element = firstElement('tencent-doc-TIMImageElem-1.json');
    if (element.MsgType !== 'TIMImageElem') throw new Error('expected an image');
    const infos = element.MsgContent.ImageInfoArray;
    expect(infos.map((info) => info.Type)).toEqual([1, 2, 3]);
    expect(infos[0]).toMatchObject({ Width: 2448, Height: 3264, Size: 1853095 });
    expect(infos[2]!.URL).toMatch(/\/198$/);
    expect(element.MsgContent.ImageFormat).toBe(1);
  });

  it('types sound with and without Url (legacy SDK 2.x/3.x)', () => {
    const current = firstElement('tencent-doc-TIMSoundElem-1.json');
    const legacy = firstElement('tencent-doc-TIMSoundElem-2-legacy-sdk2x3x.json');
    if (current.MsgType !== 'TIMSoundElem' || legacy.MsgType !== 'TIMSoundElem')
      throw new Error('expected sound');
    expect(current.MsgContent.Url).toMatch(/^https:\/\/.*myqcloud\.com\//);
    expect(current.MsgContent).toMatchObject({ Size: 62351, Second: 1, Download_Flag: 2 });
    expect(legacy.MsgContent.Url).toBeUndefined();
    expect(legacy.MsgContent.UUID).toBe('305c0201');
  });

  it('types video with and without urls (legacy SDK 2.x/3.x)', () => {
    const current = firstElement('tencent-doc-TIMVideoFileElem-1.json');
    const legacy = firstElement('tencent-doc-TIMVideoFileElem-2-legacy-sdk2x3x.json');
    if (current.MsgType !== 'TIMVideoFileElem' || legacy.MsgType !== 'TIMVideoFileElem')
      throw new Error('video');
    expect(current.MsgContent).toMatchObject({ VideoSecond: 5, VideoFormat: 'mp4', ThumbWidth: 720 });
    expect(current.MsgContent.ThumbUrl).toMatch(/^https:/);
    expect(legacy.MsgContent.VideoUrl).toBeUndefined();
    expect(legacy.MsgContent.ThumbUrl).toBeUndefined();
    expect(legacy.MsgContent.VideoSize).toBe(1194603);
  });

  it('types file, location, face and custom elements', () => {
    const file = firstElement('tencent-doc-TIMFileElem-1.json');
    const location = firstElement('tencent-doc-TIMLocationElem-1.json');
    const face = firstElement('tencent-doc-TIMFaceElem-1.json');
    const custom = firstElement('tencent-doc-TIMCustomElem-1.json');
    expect(file.MsgType === 'TIMFileElem' && file.MsgContent.FileSize).toBe(1773552);
    expect(location.MsgType === 'TIMLocationElem' && location.MsgContent.Latitude).toBeCloseTo(29.3406567);
    expect(face.MsgType === 'TIMFaceElem' && face.MsgContent.Index).toBe(1);
    expect(custom.MsgType === 'TIMCustomElem' && custom.MsgContent.Sound).toBe('dingdong.aiff');
  });

  it('keeps a combined body in order', () => {
    const body = parseFixture('tencent-doc-MsgBody-text-face-text-1.json').data.MsgBody;
    expect(body.map((element) => element.MsgType)).toEqual(['TIMTextElem', 'TIMFaceElem', 'TIMTextElem']);
  });

  it('types OfflinePushInfo and keeps its vendor blocks', () => {
    const push = parseFixture('tencent-doc-OfflinePushInfo-1.json').data.OfflinePushInfo;
    expect(push).toMatchObject({ PushFlag: 0, Title: 'This is the push title', Ext: 'Passthrough content' });
    expect(push?.ApnsInfo).toMatchObject({ Sound: 'apns.mp3', MutableContent: 1 });
  });

  it('reads the callback-response fixture (an answer to Tencent, not an event) as an odd event', () => {
    const response = loadFixture('tencent-doc-callback-response-1.json');
    expect(parseWebhookEvent(response)).toMatchObject({ event_type: '', data: undefined, raw: response });
    const event = parseMessage(envelope(response));
    expect(event.issues.map((issue) => issue.path.join('.'))).toEqual([
      'data.From_Account',
      'data.To_Account',
      'data.MsgBody',
    ]);
    expect(() => parseWebhookEvent(envelope(response), { strict: true })).toThrow(/data\.From_Account/);
  });
});

describe('parseWebhookEvent tolerance', () => {
  it('accepts EventTime (and other numbers) sent as strings', () => {
    const body = eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' } }], 7, {
      EventTime: '1670574414123',
      MsgSeq: '7',
    });
    const event = parseMessage(body);
    expect(event.data.EventTime).toBe(1670574414123);
    expect(event.data.MsgSeq).toBe(7);
  });

  it('keeps unknown fields at every level', () => {
    const body = eventWith(
      [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'hi', Lang: 'th' }, Extra: 1 }],
      1,
      {
        NewTopField: true,
      },
    );
    const event = parseMessage({ ...body, trace_id: 'abc' });
    expect(event.trace_id).toBe('abc');
    expect(event.data.NewTopField).toBe(true);
    expect(event.data.MsgBody[0]).toMatchObject({ Extra: 1, MsgContent: { Lang: 'th' } });
  });

  it('passes an element of an unknown type through, untouched', () => {
    const future = { MsgType: 'TIMStreamElem', MsgContent: { Chunk: 'x' }, Seq: 3 };
    const element = parseMessage(eventWith([future])).data.MsgBody[0]!;
    expect(element).toEqual(future);
    expect(String(element.MsgType)).toBe('TIMStreamElem');
  });

  it('accepts a string, a Buffer, an ArrayBuffer and an object alike', () => {
    const body = textEvent('same');
    const text = JSON.stringify(body);
    const bytes = Buffer.from(text);
    for (const input of [
      text,
      bytes,
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
      body,
    ]) {
      expect(parseMessage(input).data.MsgBody[0]).toMatchObject({ MsgContent: { Text: 'same' } });
    }
  });
});

describe('parseWebhookEvent refusals', () => {
  const never: [string, unknown, RegExp][] = [
    ['an empty body', '', /body is empty/],
    ['non-JSON', '<html>', /not valid JSON/],
    ['bytes that are not UTF-8', Buffer.from([0xff, 0xfe, 0x7b]), /not valid UTF-8/],
    ['a JSON array', '[]', /expected a JSON object, received an array/],
    ['null', null, /expected a JSON object, received null/],
    ['a number', '42', /expected a JSON object, received number/],
  ];

  it.each(never)('refuses %s, in either mode, with a readable OAValidationError', (_label, body, message) => {
    for (const strict of [false, true]) {
      expect(() => parseWebhookEvent(body, { strict })).toThrow(OAValidationError);
      expect(() => parseWebhookEvent(body, { strict })).toThrow(message);
    }
  });

  const strictOnly: [string, unknown, RegExp][] = [
    [
      'a missing data',
      { event_type: 'message', username: 'u', timestamp: 't' },
      /^Invalid webhook event: data: missing/,
    ],
    [
      'a broken known element',
      eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: 5 } }]),
      /MsgBody\[0\]\.MsgContent\.Text/,
    ],
    [
      'an image without ImageInfoArray',
      eventWith([{ MsgType: 'TIMImageElem', MsgContent: {} }]),
      /ImageInfoArray/,
    ],
    [
      'a non-numeric EventTime',
      eventWith([], 1, { EventTime: 'soon' }),
      /data\.EventTime: .*expected number/,
    ],
  ];

  it.each(strictOnly)(
    'with strict: true, refuses %s with a readable OAValidationError',
    (_label, body, message) => {
      let caught: unknown;
      try {
        parseWebhookEvent(body, { strict: true });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(OAValidationError);
      expect((caught as OAValidationError).message).toMatch(message);
      // Without strict, the same body is an event whose issues say the same.
      const event = parseWebhookEvent(body);
      expect(event.issues.length).toBeGreaterThan(0);
      expect((caught as OAValidationError).issues).toEqual(event.issues);
    },
  );

  it('never quotes the body in its message', () => {
    expect(() => parseWebhookEvent('{"secret": "my card number 4111"')).toThrow(/^[^4]*$/);
  });
});

function textEvent(text: string) {
  return eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: text } }]);
}
