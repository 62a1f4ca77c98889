/**
 * The tolerant reader: turns any JSON object into a {@link WebhookEvent}, typed as far as its fields
 * allow. The spec asks a receiver to "ignore unknown fields and treat optional ones defensively", and a
 * refusal would lose the user's message, so nothing here throws: each field is checked on its own, one
 * that does not match is left out of the typed view and listed in `issues`, and the body stays in `raw`.
 */
import type * as z from 'zod/mini';
import { webhookFastPath } from '#webhook-runtime';
import type { OAValidationIssue } from '../errors.js';
import { ZOD_WORDS } from '../schemas/messages.js';
import { toIssues } from '../schemas/validate.js';
import { isJsonObject, SLOW } from './compiled.js';
import {
  ElementTypeSchema,
  KnownMsgBodyElementSchema,
  type MsgBodyElement,
  MsgBodyElementSchema,
  NumberLikeSchema,
  StringLikeSchema,
  type UnknownMsgBodyElement,
} from './element-schemas.js';
import type { WebhookFastPath } from './fast-path.js';
import {
  OfflinePushInfoSchema,
  type TIMMessageCallback,
  TIMMessageCallbackSchema,
  TimestampSchema,
  WebhookEnvelopeSchema,
  type WebhookEvent,
} from './schemas.js';

type Path = (string | number)[];
type Issues = OAValidationIssue[];

const issue = (path: Path, message: string): OAValidationIssue => ({ path, message });

/** The runtime's fast path, compiled on the first read; `null` where the runtime has none (workerd). */
let runtimeFastPath: WebhookFastPath | null | undefined;

function fastPath(): WebhookFastPath | undefined {
  runtimeFastPath ??=
    webhookFastPath?.({
      NumberLikeSchema,
      StringLikeSchema,
      TimestampSchema,
      KnownMsgBodyElementSchema,
      ElementTypeSchema,
      LooseObjectSchema: OfflinePushInfoSchema.shape.AndroidInfo,
    }) ?? null;
  return runtimeFastPath ?? undefined;
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
  fastPath: WebhookFastPath | undefined,
  nested: Record<string, (field: unknown, at: Path) => unknown> = {},
): Record<string, unknown> {
  const typed: Record<string, unknown> = { ...value };
  const fast = fastPath?.fieldReaders(shape);
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
    const quick = fast?.get(key)?.(field) ?? SLOW;
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
function readElement(
  value: unknown,
  path: Path,
  issues: Issues,
  fast: WebhookFastPath | undefined,
): MsgBodyElement | undefined {
  if (!isJsonObject(value)) {
    issues.push(issue(path, 'expected an element object'));
    return undefined;
  }
  const type = value.MsgType;
  if (typeof type === 'string') {
    const quick = fast?.elementReader(type)?.(value) ?? SLOW;
    if (quick !== SLOW) return quick as MsgBodyElement;
  }
  const result = MsgBodyElementSchema.safeParse(value, ZOD_WORDS);
  if (result.success) return result.data;
  addIssues(issues, path, result.error);
  const marked = typeof type === 'string' ? `${type} (invalid)` : '(invalid)';
  return { ...value, MsgType: marked } as unknown as UnknownMsgBodyElement;
}

function readMsgBody(
  value: unknown,
  path: Path,
  issues: Issues,
  fast: WebhookFastPath | undefined,
): MsgBodyElement[] {
  if (!Array.isArray(value)) {
    issues.push(issue(path, 'expected an array of elements'));
    return [];
  }
  const body: MsgBodyElement[] = [];
  value.forEach((element, index) => {
    const typed = readElement(element, [...path, index], issues, fast);
    if (typed) body.push(typed);
  });
  return body;
}

function readObject(
  value: unknown,
  path: Path,
  issues: Issues,
  fast: WebhookFastPath | undefined,
  shape: Record<string, z.ZodMiniType>,
) {
  if (isJsonObject(value)) return readFields(shape, value, path, issues, fast);
  issues.push(issue(path, 'expected an object'));
  return undefined;
}

/** The `data` of a message event: always an object with a `MsgBody` array, whatever arrived. */
function readCallback(value: unknown, issues: Issues, fast: WebhookFastPath | undefined): TIMMessageCallback {
  const path: Path = ['data'];
  if (!isJsonObject(value)) {
    issues.push(issue(path, value === undefined ? 'missing' : 'expected an object'));
    return { MsgBody: [] };
  }
  const typed = readFields(TIMMessageCallbackSchema.shape, value, path, issues, fast, {
    MsgBody: (field, at) => readMsgBody(field, at, issues, fast),
    OfflinePushInfo: (field, at) => readObject(field, at, issues, fast, OfflinePushInfoSchema.shape),
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
  const fast = fastPath();
  return fast?.readWellFormed(value) ?? readEvent(value, fast);
}

/** Reads any JSON object as an event, field by field, listing in `issues` what did not match. */
export function readAnyEvent(value: Record<string, unknown>): WebhookEvent {
  return readEvent(value, fastPath());
}

/**
 * {@link readAnyEvent} without the runtime's fast path, as workerd reads every event: each field
 * judged by its schema. The fast path must give exactly this.
 */
export function readEventBySchemas(value: Record<string, unknown>): WebhookEvent {
  return readEvent(value, undefined);
}

function readEvent(value: Record<string, unknown>, fast: WebhookFastPath | undefined): WebhookEvent {
  const issues: Issues = [];
  const envelope = readFields(WebhookEnvelopeSchema.shape, value, [], issues, fast);
  for (const key of ['username', 'timestamp'] as const) {
    if (value[key] === undefined) issues.push(issue([key], 'missing'));
  }
  const type = value.event_type;
  // `envelope` is already this event's own copy of the body: completed in place, keys in the same order.
  if (type === 'message') {
    envelope.event_type = 'message';
    envelope.data = readCallback(value.data, issues, fast);
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
