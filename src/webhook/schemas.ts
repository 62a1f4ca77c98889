/**
 * Schemas of an inbound OA webhook event (spec "Events") and of its `data`, a Tencent Cloud Chat (IM)
 * message callback. They describe the typed view `parseWebhookEvent` builds: unknown fields are kept,
 * every field may be missing, and numbers and strings that Tencent sends either way are normalised.
 * The reader applies them field by field (see `read-event.ts`), so one odd field never costs the event.
 */
import * as z from 'zod/mini';
import type { OAValidationIssue } from '../errors.js';
import { MsgBodyElementSchema, NumberLikeSchema, StringLikeSchema } from './element-schemas.js';

/** Push notification settings the sender attached. `Ext` is a string that often holds JSON. */
export const OfflinePushInfoSchema = z.looseObject({
  /** 0: push, 1: do not push. */
  PushFlag: z.optional(NumberLikeSchema),
  /** The push notification's title. */
  Title: z.optional(z.string()),
  /** The push notification's text. */
  Desc: z.optional(z.string()),
  /** Extra data for the push notification. */
  Ext: z.optional(z.string()),
  /** Android push settings. */
  AndroidInfo: z.optional(z.looseObject({})),
  /** iOS (APNs) push settings. */
  ApnsInfo: z.optional(z.looseObject({})),
});

/**
 * The Tencent IM message callback carried in `data`: `C2C.CallbackAfterSendMsg` (one-to-one, with
 * `To_Account`) or `Group.CallbackAfterSendMsg` (with `GroupId`). Every field may be missing; a message
 * event whose `data` lacks the sender, the recipient (both `To_Account` and `GroupId`) or `MsgBody`
 * lists that in `event.issues`, and `MsgBody` is then `[]`.
 */
export const TIMMessageCallbackSchema = z.looseObject({
  /** The IM callback that produced the event, e.g. `C2C.CallbackAfterSendMsg`. */
  CallbackCommand: z.optional(z.string()),
  /** The sender's UserID (a numeric one that arrived as a number is a string here). */
  From_Account: z.optional(StringLikeSchema),
  /** The recipient's UserID, in a one-to-one message. */
  To_Account: z.optional(StringLikeSchema),
  /** The group, in a group message (which has no `To_Account`). */
  GroupId: z.optional(StringLikeSchema),
  /** The group's type (`Public`, `Work`, `Meeting`, `AVChatRoom`...), in a group message. */
  Type: z.optional(z.string()),
  /** Who made the request, in a group message (an admin sending through the REST API). */
  Operator_Account: z.optional(StringLikeSchema),
  /** The message's elements, in order. */
  MsgBody: z.array(MsgBodyElementSchema),
  /** The message format version. */
  MsgVersion: z.optional(NumberLikeSchema),
  /** The IM application instance. */
  InstanceId: z.optional(NumberLikeSchema),
  /** 32-bit random number; with `MsgSeq` and `MsgTime` it makes `MsgKey`. */
  MsgRandom: z.optional(NumberLikeSchema),
  /** The random number of a group message (group callbacks name it `Random`). */
  Random: z.optional(NumberLikeSchema),
  /** The message sequence number. */
  MsgSeq: z.optional(NumberLikeSchema),
  /** Seconds since the epoch. */
  MsgTime: z.optional(NumberLikeSchema),
  /** Whether the message may be extended. */
  SupportMessageExtension: z.optional(NumberLikeSchema),
  /** Identifies a one-to-one message; what `dedupe` keys on first. */
  MsgKey: z.optional(StringLikeSchema),
  /** The message id. */
  MsgId: z.optional(StringLikeSchema),
  /** 1: delivered only to online users. */
  OnlineOnlyFlag: z.optional(NumberLikeSchema),
  /** 0 when the message was delivered. */
  SendMsgResult: z.optional(NumberLikeSchema),
  /** The IM service's text for `SendMsgResult`. */
  ErrorInfo: z.optional(z.string()),
  /** -1 when delivery failed. */
  UnreadMsgNum: z.optional(NumberLikeSchema),
  /** Milliseconds since the epoch (Tencent sometimes sends it as a string; it is a number here). */
  EventTime: z.optional(NumberLikeSchema),
  /** Custom data the sender attached. */
  CloudCustomData: z.optional(z.string()),
  /** How the message is pushed to an offline recipient. */
  OfflinePushInfo: z.optional(OfflinePushInfoSchema),
});

/** Epoch numbers at or above this are milliseconds, below it seconds (1e11 s is the year 5138). */
const MILLISECONDS_FROM = 1e11;

/**
 * The envelope's `timestamp`: ISO 8601 UTC as the spec shows it (kept as the string it is); a number
 * of seconds or milliseconds since the epoch becomes that ISO string.
 */
export const TimestampSchema = z.pipe(
  z.transform((value: unknown) => {
    if (typeof value !== 'number' || !Number.isFinite(value)) return value;
    const date = new Date(value >= MILLISECONDS_FROM ? value : value * 1000);
    return Number.isNaN(date.getTime()) ? value : date.toISOString();
  }),
  z.string(),
);

/** The envelope fields every event has (spec "Events"), whatever its type. */
export const WebhookEnvelopeSchema = z.looseObject({
  /** Username of the OA account that received the event. */
  username: z.optional(StringLikeSchema),
  /** When the OA service created the payload, ISO 8601 UTC. */
  timestamp: z.optional(TimestampSchema),
});

/** The typed view of a `message` event: the envelope around a {@link TIMMessageCallbackSchema}. */
// Marked pure so that a bundle whose reader never uses it (the reader reads field by field) drops it:
// a bundler does not see through zod/mini's re-exports that its calls have no side effects.
export const WebhookMessageEventSchema = /* @__PURE__ */ z.extend(WebhookEnvelopeSchema, {
  /** `message`: a user's message. */
  event_type: /* @__PURE__ */ z.literal('message'),
  /** The client's message, as Tencent IM reported it. */
  data: TIMMessageCallbackSchema,
});

/**
 * What every event carries besides its own fields: what did not match, and the body as it arrived.
 */
export interface WebhookEventExtras {
  /**
   * Each field that did not match its schema, with its path (`data.MsgBody[0].MsgContent.Text`) and
   * what was wrong, never its value. Such a field is left out of the typed view (an element becomes an
   * unknown one); its value is in `raw`. Empty for an event that matched in full.
   */
  issues: OAValidationIssue[];
  /** The JSON object as it arrived, before any normalisation. */
  raw: Record<string, unknown>;
}

/** A `message` event: a client wrote to the OA account. */
export type WebhookMessageEvent = z.infer<typeof WebhookMessageEventSchema> & WebhookEventExtras;

/**
 * An event of a type this SDK does not know (the spec says other types may come): its fields as they
 * arrived. `event_type` is `''` when the body had none (then listed in `issues`).
 */
export interface WebhookUnknownEvent extends WebhookEventExtras {
  /** The event type, `''` when the body had none. */
  event_type: string;
  /** The event's data, as it arrived. */
  data: unknown;
  /** The OA account that received the event. */
  username?: string;
  /** When the OA service created the payload (ISO 8601). */
  timestamp?: string;
  [key: string]: unknown;
}

/**
 * An inbound event. Narrow it with {@link isMessageEvent}: TypeScript cannot tell `'message'` from
 * "any other string" in a `switch`, so `event.event_type === 'message'` alone does not type `data`.
 */
export type WebhookEvent = WebhookMessageEvent | WebhookUnknownEvent;

/** `true` for a `message` event, whose `data` is typed. */
export function isMessageEvent(event: WebhookEvent): event is WebhookMessageEvent {
  return event.event_type === 'message';
}

/** Push notification settings of a message. */
export type OfflinePushInfo = z.infer<typeof OfflinePushInfoSchema>;
/** The Tencent IM message callback in `WebhookMessageEvent.data`. */
export type TIMMessageCallback = z.infer<typeof TIMMessageCallbackSchema>;
