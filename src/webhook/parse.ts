import { OAValidationError } from '../errors.js';
import { formatIssues } from '../schemas/validate.js';
import { isJsonObject } from './compiled.js';
import { readWebhookEvent } from './read-event.js';
import type { WebhookEvent } from './schemas.js';

/**
 * How deeply an event may nest objects and arrays, the event itself being the first level. A real event
 * is about 8 deep (event, `data`, `MsgBody`, element, `MsgContent`, `ImageInfoArray`, image); one far
 * deeper cannot be stored or passed on, since `JSON.stringify` (a queue, a log, `structuredClone`) runs
 * out of stack on it, and would be refused by the store after the handler had accepted it.
 */
const MAX_EVENT_DEPTH = 64;

// fatal: bytes that are not UTF-8 are a malformed body, not text with replacement characters.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON text and the value it holds. */
interface Decoded {
  value: unknown;
  /** The JSON text, when the body was one (or bytes of one). */
  text?: string;
}

function decodeJson(text: string): Decoded {
  if (text.trim() === '') throw new OAValidationError('Invalid webhook event: the body is empty');
  try {
    return { value: JSON.parse(text), text };
  } catch (cause) {
    // JSON.parse's own message quotes the body, which may hold a user's message: keep it in `cause` only.
    throw new OAValidationError('Invalid webhook event: the body is not valid JSON', [], { cause });
  }
}

function toText(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch (cause) {
    throw new OAValidationError('Invalid webhook event: the body is not valid UTF-8', [], { cause });
  }
}

/** Options of {@link parseWebhookEvent}. */
export interface ParseWebhookEventOptions {
  /**
   * Refuse, with an {@link OAValidationError} listing them, events that have any `issues` (a field that
   * does not match, a missing sender or `MsgBody`), as versions before the tolerant reader did. Events
   * of another `event_type` that match the envelope are still returned.
   * @default false
   */
  strict?: boolean | undefined;
}

/** The body as a JSON value: bytes and strings are decoded, anything else was already parsed. */
function decodeBody(body: unknown): Decoded {
  if (typeof body === 'string') return decodeJson(body);
  // isView and the tag check also recognise bytes from another realm (a vm context, a worker's copy).
  if (ArrayBuffer.isView(body)) {
    return decodeJson(toText(new Uint8Array(body.buffer, body.byteOffset, body.byteLength)));
  }
  if (Object.prototype.toString.call(body) === '[object ArrayBuffer]') {
    return decodeJson(toText(new Uint8Array(body as ArrayBuffer)));
  }
  return { value: body };
}

/**
 * Whether a JSON text opens at most `limit` objects and arrays in all: then what it holds cannot nest
 * deeper than that, and need not be walked. Brackets inside strings are counted too, which only errs
 * towards walking.
 */
function opensAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of BRACKETS) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1)) {
      if (++count > limit) return false;
    }
  }
  return true;
}
const BRACKETS = ['{', '['];

/**
 * Whether `value` (at level `depth`) nests objects or arrays deeper than `limit` levels. Recursive, but
 * never more than `limit` calls deep: it stops descending there.
 */
function nestedDeeperThan(value: object, limit: number, depth = 1): boolean {
  if (depth > limit) return true;
  if (Array.isArray(value)) {
    for (const child of value) {
      if (typeof child === 'object' && child !== null && nestedDeeperThan(child, limit, depth + 1))
        return true;
    }
    return false;
  }
  for (const child of Object.values(value)) {
    if (typeof child === 'object' && child !== null && nestedDeeperThan(child, limit, depth + 1)) return true;
  }
  return false;
}

/**
 * Parses the body of an inbound OA webhook request into a {@link WebhookEvent}, typed as far as its
 * fields allow. Only what can never be an event is refused: every JSON object (up to 64 levels deep)
 * gives an event.
 *
 * - A `message` event has a typed `data`: each `MsgBody` element typed by its `MsgType`, numbers that
 *   arrived as strings (`EventTime: "1670574414123"`) as numbers, numeric UserIDs as strings, a numeric
 *   `timestamp` as an ISO string. A field that does not match its schema is left out of the typed view
 *   (an element becomes an unknown element marked `(invalid)`) and listed in `event.issues`.
 * - Any other `event_type` gives a {@link WebhookUnknownEvent} with `data` as it arrived.
 * - Unknown fields are kept; `event.raw` is the object as it arrived.
 *
 * @param body - the raw body (a string, a `Buffer`/`Uint8Array` or an `ArrayBuffer`, decoded as UTF-8
 * JSON) or a value a body parser already produced (a plain object).
 * @throws {@link OAValidationError} when the body is empty, not UTF-8, not JSON, not a JSON object, or
 * nested deeper than 64 levels (objects and arrays), which no event is; with `strict: true`, also when
 * the event has `issues`. The message names each problem with its path
 * (`data.MsgBody[0].MsgContent.Text: ...`), never a value.
 *
 * @example
 * ```ts
 * const event = parseWebhookEvent(rawBody);
 * if (isMessageEvent(event)) console.log(event.data.From_Account, getMessageText(event));
 * if (event.issues.length > 0) console.warn('odd event', event.issues);
 * ```
 */
export function parseWebhookEvent(body: unknown, options: ParseWebhookEventOptions = {}): WebhookEvent {
  const { value, text } = decodeBody(body);
  if (!isJsonObject(value)) {
    const received = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw new OAValidationError(`Invalid webhook event: expected a JSON object, received ${received}`);
  }
  if (
    !(text !== undefined && opensAtMost(text, MAX_EVENT_DEPTH)) &&
    nestedDeeperThan(value, MAX_EVENT_DEPTH)
  ) {
    throw new OAValidationError(`Invalid webhook event: nested deeper than ${MAX_EVENT_DEPTH} levels`);
  }
  const event = readWebhookEvent(value);
  if (options?.strict === true && event.issues.length > 0) {
    throw new OAValidationError(`Invalid webhook event: ${formatIssues(event.issues)}`, event.issues);
  }
  return event;
}
