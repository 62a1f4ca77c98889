/**
 * Property tests: whatever arrives (random JSON, random bytes, events with random parts), the handlers
 * answer 2xx or 4xx, never crash, never leave an unhandled rejection; and whatever the parser accepts, the
 * content helpers can read.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  getMessageMedia,
  getMessageText,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { listen, recordingLogger } from './support.js';

const MSG_TYPES = [
  'TIMTextElem',
  'TIMLocationElem',
  'TIMFaceElem',
  'TIMCustomElem',
  'TIMSoundElem',
  'TIMImageElem',
  'TIMFileElem',
  'TIMVideoFileElem',
  'TIMRelayElem',
  'TIMFutureElem',
];
const FIELDS = ['Text', 'Desc', 'Latitude', 'Longitude', 'Index', 'Data', 'Url', 'UUID', 'Size', 'Second'];
const numberish = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.integer().map(String),
  fc.string(),
  fc.constant(null),
);
const imageInfo = fc.record(
  { Type: fc.oneof(fc.constantFrom(1, 2, 3, '2', 9), numberish), URL: fc.webUrl(), Width: numberish },
  { requiredKeys: [] },
);
const content = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), fc.oneof(fc.string(), numberish, fc.jsonValue())),
  fc.record({ ImageInfoArray: fc.array(imageInfo, { maxLength: 4 }) }),
  fc.jsonValue(),
);
const element = fc.record(
  { MsgType: fc.oneof(fc.constantFrom(...MSG_TYPES), fc.string()), MsgContent: content },
  { requiredKeys: ['MsgType'] },
);
/** Mostly well-formed events with random parts, so the schema is exercised past its first check. */
const eventLike = fc.record(
  {
    event_type: fc.oneof(fc.constant('message'), fc.jsonValue()),
    username: fc.oneof(fc.string(), fc.jsonValue()),
    timestamp: fc.oneof(
      fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      fc.jsonValue(),
    ),
    data: fc.record(
      {
        From_Account: fc.string(),
        To_Account: fc.string(),
        MsgBody: fc.array(element, { maxLength: 5 }),
        MsgKey: fc.string({ maxLength: 3 }),
        EventTime: numberish,
        MsgTime: numberish,
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ['data'] },
);
/** Events Tencent could send: every element valid for its type, numbers sometimes as strings. */
const num = fc.oneof(
  fc.integer(),
  fc.integer({ min: 0 }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const validElement = fc.oneof(
  fc.record({ MsgType: fc.constant('TIMTextElem'), MsgContent: fc.record({ Text: fc.string() }) }),
  fc.record({
    MsgType: fc.constant('TIMLocationElem'),
    MsgContent: fc.record({ Latitude: num, Longitude: num }),
  }),
  fc.record({
    MsgType: fc.constant('TIMFaceElem'),
    MsgContent: fc.record({ Index: num, Data: opt(fc.string()) }),
  }),
  fc.record({
    MsgType: fc.constant('TIMSoundElem'),
    MsgContent: fc.record({ Url: opt(fc.webUrl()), Size: opt(num) }),
  }),
  fc.record({
    MsgType: fc.constant('TIMFileElem'),
    MsgContent: fc.record({ Url: opt(fc.webUrl()), FileName: opt(fc.string()) }),
  }),
  fc.record({
    MsgType: fc.constant('TIMVideoFileElem'),
    MsgContent: fc.record({ VideoUrl: opt(fc.webUrl()), ThumbWidth: opt(num) }),
  }),
  fc.record({
    MsgType: fc.constant('TIMImageElem'),
    MsgContent: fc.record({
      ImageInfoArray: fc.array(fc.record({ Type: num, URL: opt(fc.webUrl()), Width: opt(num) }), {
        maxLength: 4,
      }),
    }),
  }),
  fc.record({
    MsgType: fc.string().filter((type) => !MSG_TYPES.slice(0, -1).includes(type)),
    MsgContent: fc.jsonValue(),
    Extra: fc.jsonValue(),
  }),
);
const validEvent = fc.record({
  event_type: fc.constant('message'),
  username: fc.string(),
  timestamp: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  data: fc.record({
    From_Account: fc.string(),
    To_Account: fc.string(),
    MsgBody: fc.array(validElement, { maxLength: 5 }),
    MsgKey: opt(fc.string({ maxLength: 3 })),
    EventTime: opt(num),
  }),
});
const anyBody = fc.oneof(
  validEvent.map((value) => JSON.stringify(value)),
  eventLike.map((value) => JSON.stringify(value)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string(),
  fc.uint8Array({ maxLength: 512 }),
);
const method = fc.oneof(
  { weight: 8, arbitrary: fc.constant('POST') },
  fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'),
);

const accepted: WebhookEvent[] = [];
const onEvent = (event: WebhookEvent) => {
  // What the parser accepts, the helpers must read without throwing.
  getMessageText(event);
  getMessageMedia(event, { imageVariant: 'thumbnail' });
  accepted.push(event);
};
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(() => {
  process.on('unhandledRejection', onUnhandled);
});
afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

const isTwoOrFour = (status: number) => (status >= 200 && status < 300) || (status >= 400 && status < 500);

describe('webhook fuzzing', () => {
  it('node handler over node:http answers every random request with 2xx/4xx', async () => {
    const { lines, logger } = recordingLogger();
    const server = await listen(createWebhookHandler({ onEvent, logger, maxBodyBytes: 4096, dedupe: true }));
    try {
      await fc.assert(
        fc.asyncProperty(method, anyBody, async (verb, body) => {
          const response = await fetch(server.url, { method: verb, body: verb === 'GET' ? null : body });
          const status = response.status;
          const answer = await response.json();
          expect(isTwoOrFour(status), `status ${status}: ${JSON.stringify(answer)}`).toBe(true);
        }),
        { numRuns: 400 },
      );
    } finally {
      await server.close();
    }
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('fetch handler answers every random request with 2xx/4xx', async () => {
    const handler = createFetchWebhookHandler({ onEvent, maxBodyBytes: 4096 });
    await fc.assert(
      fc.asyncProperty(method, anyBody, async (verb, body) => {
        const request = new Request('http://x/hook', { method: verb, body: verb === 'GET' ? null : body });
        const response = await handler(request);
        expect(isTwoOrFour(response.status)).toBe(true);
        expect(await response.json()).toBeTypeOf('object');
      }),
      { numRuns: 600 },
    );
    expect(unhandled).toEqual([]);
  });

  it('every event Tencent could send is accepted (200), through both handlers', async () => {
    const node = await listen(createWebhookHandler({ onEvent }));
    const viaFetch = createFetchWebhookHandler({ onEvent });
    const before = accepted.length;
    try {
      await fc.assert(
        fc.asyncProperty(validEvent, async (event) => {
          const body = JSON.stringify(event);
          const answers = [
            await fetch(node.url, { method: 'POST', body }),
            await viaFetch(new Request('http://x/hook', { method: 'POST', body })),
          ];
          for (const answer of answers) expect(answer.status, await answer.text()).toBe(200);
        }),
        { numRuns: 200 },
      );
    } finally {
      await node.close();
    }
    expect(accepted.length - before).toBe(400);
  });
});
