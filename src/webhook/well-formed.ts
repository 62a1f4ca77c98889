/**
 * The reader of a well-formed `message` event, written out by hand: an envelope with its `username` and
 * `timestamp`, a `data` object with a sender, a recipient and a `MsgBody` whose elements all match their
 * type, every known field of the right type. It returns exactly the event `readWebhookEvent` builds for
 * such a body (same values, same key order, no `issues`), and `undefined` for anything else, which is
 * then read field by field and judged by the schemas as before. A test runs both readers on the
 * fixtures and on mutations of every field, and compares their results.
 */
import { type Reader, SLOW } from './compiled.js';
import type { TIMMessageCallback, WebhookEvent } from './schemas.js';

/** A number written as a string, as `NumberLikeSchema` takes one. */
export const NUMERIC_STRING = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * A `NumberLikeSchema` field when it needs no judging: a finite number, or a numeric string as one;
 * `undefined` for anything else.
 */
export function plainNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || !NUMERIC_STRING.test(value)) return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/** A `StringLikeSchema` field when it needs no judging: a string, or a finite number as a string. */
export function plainString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** A JSON object (not an array, not null), as `isJsonObject` tells it. */
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Reads `MsgBody`'s elements with the element readers, or returns `undefined` when one is not plain. */
type ElementsReader = (value: unknown[]) => unknown[] | undefined;

type Typed = Record<string, unknown>;

// Each `put` takes a field as `readFields` does: a missing one is skipped, a plain one is put in `typed`
// (normalised), and anything else answers `false`: the schemas must judge it.

function putString(typed: Typed, key: string, field: unknown): boolean {
  if (field === undefined) return true;
  if (typeof field !== 'string') return false;
  typed[key] = field;
  return true;
}

function putStringLike(typed: Typed, key: string, field: unknown): boolean {
  if (field === undefined) return true;
  const string = plainString(field);
  if (string === undefined) return false;
  typed[key] = string;
  return true;
}

function putNumber(typed: Typed, key: string, field: unknown): boolean {
  if (field === undefined) return true;
  const number = plainNumber(field);
  if (number === undefined) return false;
  typed[key] = number;
  return true;
}

function putRead(typed: Typed, key: string, field: unknown, read: Reader): boolean {
  if (field === undefined) return true;
  const result = read(field);
  if (result === SLOW) return false;
  typed[key] = result;
  return true;
}

/** `OfflinePushInfo` as `readObject` reads it, or `undefined`. */
function readPushInfo(value: unknown, readLoose: Reader): Typed | undefined {
  if (!isObject(value)) return undefined;
  const typed: Typed = { ...value };
  const plain =
    putNumber(typed, 'PushFlag', value.PushFlag) &&
    putString(typed, 'Title', value.Title) &&
    putString(typed, 'Desc', value.Desc) &&
    putString(typed, 'Ext', value.Ext) &&
    putRead(typed, 'AndroidInfo', value.AndroidInfo, readLoose) &&
    putRead(typed, 'ApnsInfo', value.ApnsInfo, readLoose);
  return plain ? typed : undefined;
}

/**
 * `data` of a well-formed message event, as `readCallback` reads it, or `undefined`. The fields go in
 * the schema's order, as `readFields` takes them.
 */
function readCallback(value: Typed, readElements: ElementsReader, readLoose: Reader): Typed | undefined {
  // What readCallback lists as missing makes an event with issues: the schemas' part.
  if (value.From_Account === undefined || value.MsgBody === undefined) return undefined;
  if (value.To_Account === undefined && value.GroupId === undefined) return undefined;
  const msgBody = value.MsgBody;
  if (!Array.isArray(msgBody)) return undefined;
  const typed: Typed = { ...value };
  const head =
    putString(typed, 'CallbackCommand', value.CallbackCommand) &&
    putStringLike(typed, 'From_Account', value.From_Account) &&
    putStringLike(typed, 'To_Account', value.To_Account) &&
    putStringLike(typed, 'GroupId', value.GroupId) &&
    putString(typed, 'Type', value.Type) &&
    putStringLike(typed, 'Operator_Account', value.Operator_Account);
  if (!head) return undefined;
  const body = readElements(msgBody);
  if (!body) return undefined;
  typed.MsgBody = body;
  const tail =
    putNumber(typed, 'MsgVersion', value.MsgVersion) &&
    putNumber(typed, 'InstanceId', value.InstanceId) &&
    putNumber(typed, 'MsgRandom', value.MsgRandom) &&
    putNumber(typed, 'Random', value.Random) &&
    putNumber(typed, 'MsgSeq', value.MsgSeq) &&
    putNumber(typed, 'MsgTime', value.MsgTime) &&
    putNumber(typed, 'SupportMessageExtension', value.SupportMessageExtension) &&
    putStringLike(typed, 'MsgKey', value.MsgKey) &&
    putStringLike(typed, 'MsgId', value.MsgId) &&
    putNumber(typed, 'OnlineOnlyFlag', value.OnlineOnlyFlag) &&
    putNumber(typed, 'SendMsgResult', value.SendMsgResult) &&
    putString(typed, 'ErrorInfo', value.ErrorInfo) &&
    putNumber(typed, 'UnreadMsgNum', value.UnreadMsgNum) &&
    putNumber(typed, 'EventTime', value.EventTime) &&
    putString(typed, 'CloudCustomData', value.CloudCustomData);
  if (!tail) return undefined;
  if (value.OfflinePushInfo !== undefined) {
    const push = readPushInfo(value.OfflinePushInfo, readLoose);
    if (!push) return undefined;
    typed.OfflinePushInfo = push;
  }
  return typed;
}

/**
 * The fields the hand-written reader knows, in the schemas' order: a test holds them to the schemas'
 * shapes, so that a field added to a schema cannot pass unchecked.
 */
export const WELL_FORMED_FIELDS = {
  envelope: ['username', 'timestamp'],
  callback: [
    'CallbackCommand',
    'From_Account',
    'To_Account',
    'GroupId',
    'Type',
    'Operator_Account',
    'MsgBody',
    'MsgVersion',
    'InstanceId',
    'MsgRandom',
    'Random',
    'MsgSeq',
    'MsgTime',
    'SupportMessageExtension',
    'MsgKey',
    'MsgId',
    'OnlineOnlyFlag',
    'SendMsgResult',
    'ErrorInfo',
    'UnreadMsgNum',
    'EventTime',
    'CloudCustomData',
    'OfflinePushInfo',
  ],
  pushInfo: ['PushFlag', 'Title', 'Desc', 'Ext', 'AndroidInfo', 'ApnsInfo'],
} as const;

/**
 * A well-formed `message` event as `readWebhookEvent` reads it, or `undefined` when any part of it is
 * not (the general reader then decides, and lists what did not match).
 */
export function readWellFormedEvent(
  value: Record<string, unknown>,
  readElements: ElementsReader,
  readLoose: Reader,
): WebhookEvent | undefined {
  if (value.event_type !== 'message') return undefined;
  const username = value.username;
  const timestamp = value.timestamp;
  if (typeof timestamp !== 'string' || username === undefined) return undefined;
  const name = plainString(username);
  if (name === undefined) return undefined;
  const data = value.data;
  if (!isObject(data)) return undefined;
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
