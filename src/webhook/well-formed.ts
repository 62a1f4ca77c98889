/**
 * The reader of a well-formed `message` event, written out by hand: an envelope with its `username` and
 * `timestamp`, a `data` object with a sender, a recipient and a `MsgBody` whose elements all match their
 * type, every known field of the right type. It returns exactly the event `readWebhookEvent` builds for
 * such a body (same values, same key order, no `issues`), and `undefined` for anything else, which is
 * then read field by field and judged by the schemas as before. A test runs both readers on the
 * fixtures and on mutations of every field, and compares their results.
 */
import { isJsonObject, onlyString, plainNumber, plainString } from './compiled.js';
import type { TIMMessageCallback, WebhookEvent } from './schemas.js';

/** Reads `MsgBody`'s elements with the element readers, or returns `undefined` when one is not plain. */
type ElementsReader = (value: unknown[]) => unknown[] | undefined;

type Typed = Record<string, unknown>;

/** What a field is when it needs no judging (normalised), or `undefined`: the schemas must judge it. */
type Plain = (value: unknown) => unknown;

/**
 * Takes a field as `readFields` does: a missing one is skipped, a plain one is put in `typed`
 * (normalised), and anything else answers `false`.
 */
function put(typed: Typed, key: string, field: unknown, plain: Plain): boolean {
  if (field === undefined) return true;
  const read = plain(field);
  if (read === undefined) return false;
  typed[key] = read;
  return true;
}

/** `OfflinePushInfo` as `readObject` reads it, or `undefined`. */
function readPushInfo(value: unknown, readLoose: Plain): Typed | undefined {
  if (!isJsonObject(value)) return undefined;
  const typed: Typed = { ...value };
  const plain =
    put(typed, 'PushFlag', value.PushFlag, plainNumber) &&
    put(typed, 'Title', value.Title, onlyString) &&
    put(typed, 'Desc', value.Desc, onlyString) &&
    put(typed, 'Ext', value.Ext, onlyString) &&
    put(typed, 'AndroidInfo', value.AndroidInfo, readLoose) &&
    put(typed, 'ApnsInfo', value.ApnsInfo, readLoose);
  return plain ? typed : undefined;
}

/** Marks the fields of `data` that have readers of their own: `MsgBody` and `OfflinePushInfo`. */
const OWN_READER: Plain = () => undefined;

/**
 * Each known field of `data`, in the schema's order, and how it is read when it needs no judging. A
 * null-prototype object: a field named like a property of `Object.prototype` is no known field.
 */
const CALLBACK_FIELDS: Readonly<Record<string, Plain | undefined>> = Object.assign(Object.create(null), {
  CallbackCommand: onlyString,
  From_Account: plainString,
  To_Account: plainString,
  GroupId: plainString,
  Type: onlyString,
  Operator_Account: plainString,
  MsgBody: OWN_READER,
  MsgVersion: plainNumber,
  InstanceId: plainNumber,
  MsgRandom: plainNumber,
  Random: plainNumber,
  MsgSeq: plainNumber,
  MsgTime: plainNumber,
  SupportMessageExtension: plainNumber,
  MsgKey: plainString,
  MsgId: plainString,
  OnlineOnlyFlag: plainNumber,
  SendMsgResult: plainNumber,
  ErrorInfo: onlyString,
  UnreadMsgNum: plainNumber,
  EventTime: plainNumber,
  CloudCustomData: onlyString,
  OfflinePushInfo: OWN_READER,
});

/**
 * `data` of a well-formed message event, as `readCallback` reads it, or `undefined`. The copy keeps the
 * order the fields came in, as `readFields` does. The fields are visited as they come, once each: events
 * of many shapes would make a lookup of each known field by name slow (a property read that has seen
 * too many shapes), while a walk of the keys is not.
 */
function readCallback(value: Typed, readElements: ElementsReader, readLoose: Plain): Typed | undefined {
  if (Object.hasOwn(value, '__proto__')) return undefined;
  // Object.assign, not a spread: see readWellFormedEvent.
  const typed: Typed = Object.assign({}, value);
  // What readCallback lists as missing makes an event with issues: the schemas' part.
  let sender = false;
  let recipient = false;
  let body = false;
  for (const key in value) {
    const field = value[key];
    if (field === undefined) continue;
    const plain = CALLBACK_FIELDS[key];
    if (plain === undefined) continue;
    if (plain !== OWN_READER) {
      const read = plain(field);
      if (read === undefined) return undefined;
      typed[key] = read;
      if (key === 'From_Account') sender = true;
      else if (key === 'To_Account' || key === 'GroupId') recipient = true;
    } else if (key === 'MsgBody') {
      if (!Array.isArray(field)) return undefined;
      const elements = readElements(field);
      if (!elements) return undefined;
      typed.MsgBody = elements;
      body = true;
    } else if (key === 'OfflinePushInfo') {
      const push = readPushInfo(field, readLoose);
      if (!push) return undefined;
      typed.OfflinePushInfo = push;
    }
  }
  return sender && recipient && body ? typed : undefined;
}

/**
 * The fields the hand-written reader knows, in the schemas' order: a test holds them to the schemas'
 * shapes, so that a field added to a schema cannot pass unchecked.
 */
export const WELL_FORMED_FIELDS = {
  envelope: ['username', 'timestamp'],
  callback: Object.keys(CALLBACK_FIELDS),
  pushInfo: ['PushFlag', 'Title', 'Desc', 'Ext', 'AndroidInfo', 'ApnsInfo'],
} as const;

/**
 * A well-formed `message` event as `readWebhookEvent` reads it, or `undefined` when any part of it is
 * not (the general reader then decides, and lists what did not match).
 */
export function readWellFormedEvent(
  value: Record<string, unknown>,
  readElements: ElementsReader,
  readLoose: Plain,
): WebhookEvent | undefined {
  if (value.event_type !== 'message') return undefined;
  const username = value.username;
  const timestamp = value.timestamp;
  if (typeof timestamp !== 'string' || username === undefined) return undefined;
  const name = plainString(username);
  if (name === undefined) return undefined;
  const data = value.data;
  if (!isJsonObject(data)) return undefined;
  const typedData = readCallback(data, readElements, readLoose);
  if (!typedData) return undefined;
  // A spread's copy takes each added field slowly (~0.7 us each on Node 20); a copy made by
  // Object.assign does not. They differ only on an own `__proto__` key, which assign would make the
  // copy's prototype: such a body goes the general way.
  if (Object.hasOwn(value, '__proto__')) return undefined;
  const event: Record<string, unknown> = Object.assign({}, value);
  event.username = name;
  event.timestamp = timestamp;
  event.event_type = 'message';
  event.data = typedData as TIMMessageCallback;
  event.issues = [];
  event.raw = value;
  return event as WebhookEvent;
}
