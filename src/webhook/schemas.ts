/**
 * Schemas of an inbound OA webhook event (spec "Events") and of its `data`, a Tencent Cloud Chat (IM)
 * message callback. Unknown fields are kept; fields Tencent's own samples leave out (`MsgVersion`,
 * `OfflinePushInfo`, `EventTime`, `MsgId` ...) are optional; numbers that arrive as strings are accepted.
 */
import { z } from 'zod';
import { MsgBodyElementSchema, NumberLikeSchema } from './element-schemas.js';

/** Push notification settings the sender attached. `Ext` is a string that often holds JSON. */
export const OfflinePushInfoSchema = z.looseObject({
  /** 0: push, 1: do not push. */
  PushFlag: NumberLikeSchema.optional(),
  Title: z.string().optional(),
  Desc: z.string().optional(),
  Ext: z.string().optional(),
  AndroidInfo: z.looseObject({}).optional(),
  ApnsInfo: z.looseObject({}).optional(),
});

/**
 * The Tencent IM message callback carried in `data` (e.g. `C2C.CallbackAfterSendMsg`). Required: who sent
 * it (`From_Account`), to whom (`To_Account`) and the message (`MsgBody`); everything else may be missing.
 */
export const TIMMessageCallbackSchema = z.looseObject({
  CallbackCommand: z.string().optional(),
  From_Account: z.string(),
  To_Account: z.string(),
  MsgBody: z.array(MsgBodyElementSchema),
  MsgVersion: NumberLikeSchema.optional(),
  InstanceId: NumberLikeSchema.optional(),
  /** 32-bit random number; with `MsgSeq` and `MsgTime` it makes `MsgKey`. */
  MsgRandom: NumberLikeSchema.optional(),
  MsgSeq: NumberLikeSchema.optional(),
  /** Seconds since the epoch. */
  MsgTime: NumberLikeSchema.optional(),
  SupportMessageExtension: NumberLikeSchema.optional(),
  /** Identifies the message; what `dedupe` keys on. */
  MsgKey: z.string().optional(),
  MsgId: z.string().optional(),
  OnlineOnlyFlag: NumberLikeSchema.optional(),
  /** 0 when the message was delivered. */
  SendMsgResult: NumberLikeSchema.optional(),
  ErrorInfo: z.string().optional(),
  /** -1 when delivery failed. */
  UnreadMsgNum: NumberLikeSchema.optional(),
  /** Milliseconds since the epoch (Tencent sometimes sends it as a string; it is a number here). */
  EventTime: NumberLikeSchema.optional(),
  CloudCustomData: z.string().optional(),
  OfflinePushInfo: OfflinePushInfoSchema.optional(),
});

/** The body the OA service posts to the account's `webhook_url` (spec "Events"). */
export const WebhookEventSchema = z.looseObject({
  /** `message` for a message event; the only type the spec shows. */
  event_type: z.string(),
  /** Username of the OA account that received the message. */
  username: z.string(),
  /** The client's message, as Tencent IM reported it. */
  data: TIMMessageCallbackSchema,
  /** When the OA service created the payload, ISO 8601 UTC (kept as the string it is). */
  timestamp: z.string(),
});

/** Push notification settings of a message. */
export type OfflinePushInfo = z.infer<typeof OfflinePushInfoSchema>;
/** The Tencent IM message callback in `WebhookEvent.data`. */
export type TIMMessageCallback = z.infer<typeof TIMMessageCallbackSchema>;
/** An inbound event, as {@link WebhookEventSchema} parses it. */
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;
