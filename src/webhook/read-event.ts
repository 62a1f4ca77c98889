/**
 * The tolerant reader: turns any JSON object into a {@link WebhookEvent}, typed as far as its fields
 * allow. The spec asks a receiver to "ignore unknown fields and treat optional ones defensively", and a
 * refusal would lose the user's message, so nothing here throws: each field is checked on its own, one
 * that does not match is left out of the typed view and listed in `issues`, and the body stays in `raw`.
 */
import type * as z from 'zod/mini';
import type { OAValidationIssue } from '../errors.js';
import { ZOD_WORDS } from '../schemas/messages.js';
import { toIssues } from '../schemas/validate.js';
import { compileReader, isJsonObject, plainNumber, plainString, type Reader, SLOW } from './compiled.js';
import {
  ElementTypeSchema,
  KnownMsgBodyElementSchema,
  type MsgBodyElement,
  MsgBodyElementSchema,
  NumberLikeSchema,
  StringLikeSchema,
  type UnknownMsgBodyElement,
} from './element-schemas.js';
import {
  OfflinePushInfoSchema,
  type TIMMessageCallback,
  TIMMessageCallbackSchema,
  TimestampSchema,
  WebhookEnvelopeSchema,
  type WebhookEvent,
} from './schemas.js';
import { readWellFormedEvent } from './well-formed.js';

type Path = (string | number)[];
type Issues = OAValidationIssue[];

const issue = (path: Path, message: string): OAValidationIssue => ({ path, message });

/**
 * The schemas that normalise, read fast with their own normalisation when its result passes their
 * check (a finite number, a string); anything else is left to the schema.
 */
const NORMALISING = new Map<z.ZodMiniType, Reader>([
  [NumberLikeSchema, (value) => plainNumber(value) ?? SLOW],
  [StringLikeSchema, (value) => plainString(value) ?? SLOW],
  [TimestampSchema, (value) => (typeof value === 'string' ? value : SLOW)],
]);

/** The fast reader of each field of a shape that has one (compiled once per schema). */
const fieldReaders = new WeakMap<Record<string, z.ZodMiniType>, Map<string, Reader>>();
function readersOf(shape: Record<string, z.ZodMiniType>): Map<string, Reader> {
  let readers = fieldReaders.get(shape);
  if (!readers) {
    readers = new Map();
    for (const [key, schema] of Object.entries(shape)) {
      const read = compileReader(schema, NORMALISING);
      if (read) readers.set(key, read);
    }
    fieldReaders.set(shape, readers);
  }
  return readers;
}

/** Each known element type's fast reader, and one for the types the SDK does not know. */
const ELEMENT_READERS = new Map<string, Reader | undefined>(
  KnownMsgBodyElementSchema.def.options.flatMap((option) => {
    const read = compileReader(option, NORMALISING);
    return option.shape.MsgType.def.values.map((type) => [type, read] as const);
  }),
);
const readUnknownElement = compileReader(ElementTypeSchema, NORMALISING);
/** `AndroidInfo` and `ApnsInfo`: any plain object, copied (`undefined` for anything else). */
const readLooseObject = compileReader(OfflinePushInfoSchema.shape.AndroidInfo, NORMALISING);
const plainLooseObject = (value: unknown): unknown => {
  const read = readLooseObject ? readLooseObject(value) : SLOW;
  return read === SLOW ? undefined : read;
};

/** `MsgBody` when each element reads fast (a plain object of its type), or `undefined`. */
function readPlainElements(value: unknown[]): unknown[] | undefined {
  const body: unknown[] = [];
  for (let index = 0; index < value.length; index++) {
    const element = value[index];
    if (!isJsonObject(element)) return undefined;
    const type = element.MsgType;
    if (typeof type !== 'string') return undefined;
    const read = ELEMENT_READERS.has(type) ? ELEMENT_READERS.get(type) : readUnknownElement;
    const quick = read ? read(element) : SLOW;
    if (quick === SLOW) return undefined;
    body.push(quick);
  }
  return body;
}

/** zod's issues for one field, moved under that field's path. */
function addIssues(issues: Issues, path: Path, error: z.core.$ZodError): void {
  for (const found of toIssues(error)) issues.push(issue([...path, ...found.path], found.message));
}

/**
 * Checks each field of `shape` that `value` has on its own. Fields outside the shape are kept as they
 * are; a field that fails is dropped (its value stays in `raw`). `nested` reads some fields itself.
 */
function readFields(
  shape: Record<string, z.ZodMiniType>,
  value: Record<string, unknown>,
  path: Path,
  issues: Issues,
  nested: Record<string, (field: unknown, at: Path) => unknown> = {},
): Record<string, unknown> {
  const typed: Record<string, unknown> = { ...value };
  const fast = readersOf(shape);
  for (const key in shape) {
    const field = value[key];
    if (field === undefined) continue;
    const read = nested[key];
    if (read) {
      const result = read(field, [...path, key]);
      if (result === undefined) delete typed[key];
      else typed[key] = result;
      continue;
    }
    const quick = fast.get(key)?.(field) ?? SLOW;
    if (quick !== SLOW) {
      typed[key] = quick;
      continue;
    }
    const result = (shape[key] as z.ZodMiniType).safeParse(field, ZOD_WORDS);
    if (result.success) {
      typed[key] = result.data;
    } else {
      delete typed[key];
      addIssues(issues, [...path, key], result.error);
    }
  }
  return typed;
}

/**
 * One `MsgBody` element. One that fails its type's schema stays in the body as an unknown element, its
 * `MsgType` marked `"TIMTextElem (invalid)"` so that a `switch` on the type never hands out content that
 * is not there; what failed is in `issues`. A value that is not even an object is left out.
 */
function readElement(value: unknown, path: Path, issues: Issues): MsgBodyElement | undefined {
  if (!isJsonObject(value)) {
    issues.push(issue(path, 'expected an element object'));
    return undefined;
  }
  const type = value.MsgType;
  if (typeof type === 'string') {
    const read = ELEMENT_READERS.has(type) ? ELEMENT_READERS.get(type) : readUnknownElement;
    const quick = read?.(value) ?? SLOW;
    if (quick !== SLOW) return quick as MsgBodyElement;
  }
  const result = MsgBodyElementSchema.safeParse(value, ZOD_WORDS);
  if (result.success) return result.data;
  addIssues(issues, path, result.error);
  const marked = typeof type === 'string' ? `${type} (invalid)` : '(invalid)';
  return { ...value, MsgType: marked } as unknown as UnknownMsgBodyElement;
}

function readMsgBody(value: unknown, path: Path, issues: Issues): MsgBodyElement[] {
  if (!Array.isArray(value)) {
    issues.push(issue(path, 'expected an array of elements'));
    return [];
  }
  const body: MsgBodyElement[] = [];
  value.forEach((element, index) => {
    const typed = readElement(element, [...path, index], issues);
    if (typed) body.push(typed);
  });
  return body;
}

function readObject(value: unknown, path: Path, issues: Issues, shape: Record<string, z.ZodMiniType>) {
  if (isJsonObject(value)) return readFields(shape, value, path, issues);
  issues.push(issue(path, 'expected an object'));
  return undefined;
}

/** The `data` of a message event: always an object with a `MsgBody` array, whatever arrived. */
function readCallback(value: unknown, issues: Issues): TIMMessageCallback {
  const path: Path = ['data'];
  if (!isJsonObject(value)) {
    issues.push(issue(path, value === undefined ? 'missing' : 'expected an object'));
    return { MsgBody: [] };
  }
  const typed = readFields(TIMMessageCallbackSchema.shape, value, path, issues, {
    MsgBody: (field, at) => readMsgBody(field, at, issues),
    OfflinePushInfo: (field, at) => readObject(field, at, issues, OfflinePushInfoSchema.shape),
  });
  // A message without these means little; it still reaches onEvent, and the app can see why it is odd.
  if (value.From_Account === undefined) issues.push(issue([...path, 'From_Account'], 'missing'));
  if (value.To_Account === undefined && value.GroupId === undefined) {
    issues.push(issue([...path, 'To_Account'], 'missing (and no GroupId)'));
  }
  if (value.MsgBody === undefined) {
    issues.push(issue([...path, 'MsgBody'], 'missing'));
    typed.MsgBody = [];
  }
  return typed as TIMMessageCallback;
}

/**
 * Reads a JSON object as an event. Never throws: a `message` event gets a typed `data`; any other
 * `event_type` (or none) gives a {@link WebhookUnknownEvent} with `data` as it arrived.
 */
export function readWebhookEvent(value: Record<string, unknown>): WebhookEvent {
  return readWellFormedEvent(value, readPlainElements, plainLooseObject) ?? readAnyEvent(value);
}

/** Reads any JSON object as an event, field by field, listing in `issues` what did not match. */
export function readAnyEvent(value: Record<string, unknown>): WebhookEvent {
  const issues: Issues = [];
  const envelope = readFields(WebhookEnvelopeSchema.shape, value, [], issues);
  for (const key of ['username', 'timestamp'] as const) {
    if (value[key] === undefined) issues.push(issue([key], 'missing'));
  }
  const type = value.event_type;
  // `envelope` is already this event's own copy of the body: completed in place, keys in the same order.
  if (type === 'message') {
    envelope.event_type = 'message';
    envelope.data = readCallback(value.data, issues);
  } else {
    if (typeof type !== 'string') {
      issues.push(issue(['event_type'], type === undefined ? 'missing' : 'expected a string'));
    }
    envelope.event_type = typeof type === 'string' ? type : '';
    envelope.data = value.data;
  }
  envelope.issues = issues;
  envelope.raw = value;
  return envelope as WebhookEvent;
}
