import { validate } from '../core/validate.js';
import { OAValidationError } from '../errors.js';
import { type WebhookEvent, WebhookEventSchema } from './schemas.js';

// fatal: bytes that are not UTF-8 are a malformed body, not text with replacement characters.
const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeJson(text: string): unknown {
  if (text.trim() === '') throw new OAValidationError('Invalid webhook event: the body is empty');
  try {
    return JSON.parse(text);
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

/**
 * Parses the body of an inbound OA webhook request into a typed {@link WebhookEvent}.
 *
 * @param body - the raw body (a string, a `Buffer`/`Uint8Array` or an `ArrayBuffer`, decoded as UTF-8
 * JSON) or a value a body parser already produced (a plain object).
 * @returns the event; unknown fields are kept, numeric strings such as `EventTime: "1670574414123"` are
 * numbers, and each `MsgBody` element is typed by its `MsgType`.
 * @throws {@link OAValidationError} when the body is empty, not UTF-8, not JSON, or not an event; its
 * message names every problem with its path (`data.MsgBody[0].MsgContent.Text: ...`), never a value.
 *
 * @example
 * ```ts
 * const event = parseWebhookEvent(rawBody);
 * console.log(event.data.From_Account, getMessageText(event));
 * ```
 */
export function parseWebhookEvent(body: unknown): WebhookEvent {
  let value = body;
  if (typeof body === 'string') value = decodeJson(body);
  // isView and the tag check also recognise bytes from another realm (a vm context, a worker's copy).
  else if (ArrayBuffer.isView(body))
    value = decodeJson(toText(new Uint8Array(body.buffer, body.byteOffset, body.byteLength)));
  else if (Object.prototype.toString.call(body) === '[object ArrayBuffer]') {
    value = decodeJson(toText(new Uint8Array(body as ArrayBuffer)));
  }
  return validate(WebhookEventSchema, value, 'webhook event');
}
