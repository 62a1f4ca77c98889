/** fast-check arbitraries of webhook bodies, shared by the property tests. */
import fc from 'fast-check';

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
export const eventLike = fc.record(
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
export const validEvent = fc.record({
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
