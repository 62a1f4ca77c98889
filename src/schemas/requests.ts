import { z } from 'zod';
import { HttpUrlSchema, MAX_ITEMS, NonBlankSchema, UuidSchema } from './common.js';
import { type MessageItem, MessageItemSchema } from './items.js';

/** Endpoint 1 body. */
export const GenerateTokenParamsSchema = z.strictObject({
  /** The api key. */
  api_key: NonBlankSchema,
  /** The api secret. */
  api_secret: NonBlankSchema,
});
/** Endpoint 2 body. */
export const RefreshTokenParamsSchema = z.strictObject({ refresh_token: NonBlankSchema });

/** Endpoint 3: `sendGreeting`. */
export const SendGreetingParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
});

/** Endpoint 4: `sendImage`. Without `link` the image is plain. */
export const SendImageParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** The image's URL (an upload's `url`). */
  image_url: HttpUrlSchema,
  /** The page that opens when the image is tapped. */
  link: HttpUrlSchema.optional(),
});

/** Endpoint 5: `sendText`. `desc` is the short text of the push notification. */
export const SendTextParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** The content: a text, an image URL, a ticket id, a flex layout, an audio URL. */
  msg: NonBlankSchema,
  /** The short text of the push notification (at most 170 characters). */
  desc: z.string().optional(),
});

/** Endpoint 12: `sendVideo`. */
export const SendVideoParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** The `ticket_id` of the video upload. */
  ticket_id: UuidSchema,
});

/**
 * Endpoint 13: `sendAudio`; the four audio values come unchanged from `uploadAudio`. Unlike the other
 * requests, unknown fields are dropped rather than refused, so that `{ user_id, ...upload }` keeps
 * working when the upload answer gains a field; every field is required, so a misspelt one still
 * fails as missing.
 */
export const SendAudioParamsSchema = z.object({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** `audio_url` of the audio upload. */
  audio_url: HttpUrlSchema,
  /** `audio_uuid` of the audio upload. */
  audio_uuid: UuidSchema,
  /** `audio_size` of the audio upload (bytes). */
  audio_size: z.number().int().positive(),
  /** `audio_duration` of the audio upload (seconds). */
  audio_duration: z.number().nonnegative(),
});

const ItemsSchema = z
  .array(MessageItemSchema)
  .min(1, 'At least one item is required')
  .max(MAX_ITEMS, `At most ${MAX_ITEMS} items per broadcast`);

/** `user_ids`; `missing`: what to say when it is left out (zod's own words name no field and no fix). */
const userIdsSchema = (missing: string) =>
  z
    .array(NonBlankSchema, {
      error: (issue) => (issue.input === undefined ? missing : 'Must be an array of user_id strings'),
    })
    .refine((ids) => new Set(ids).size === ids.length, 'Must not repeat a user_id (it would be sent twice)');

/** Whether `id` is a string with something besides white space (what `NonBlankSchema` accepts). */
const isUserId = (id: unknown): boolean => {
  if (typeof id !== 'string' || id.length === 0) return false;
  const first = id.charCodeAt(0);
  // A printable ASCII first character is not white space: most ids are settled without trim().
  return (first > 0x20 && first < 0x7f) || id.trim().length > 0;
};

/**
 * `full`, with a fast path: a list that passes (an array of non-blank user_ids, none repeated, of a
 * length `fits` accepts) is accepted by one loop and one Set, not an element schema per user_id, which
 * dominated the cost of a broadcast to 100,000 users. Any other value gets `full`'s issues, exactly.
 */
const quickUserIds = (full: z.ZodType<string[]>, fits: (length: number) => boolean) =>
  z.custom<string[]>().check((ctx) => {
    const ids = ctx.value;
    if (Array.isArray(ids) && fits(ids.length) && ids.every(isUserId) && new Set(ids).size === ids.length) {
      return;
    }
    const result = full.safeParse(ids);
    if (result.success) return;
    for (const issue of result.error.issues)
      ctx.issues.push({ ...issue, input: ids } as (typeof ctx.issues)[number]);
  });

/** Endpoint 6, `broadcast` to every user: no `user_ids`. */
const BroadcastToAllParamsSchema = z.strictObject({
  /** Every user of the OA. */
  target: z.literal('all'),
  /** One to five message items, sent in order. */
  items: ItemsSchema,
});
/** `broadcast` to the users in `user_ids`. */
const BroadcastToSelectedParamsSchema = z.strictObject({
  /** The users in `user_ids`. */
  target: z.literal('selected'),
  /** The recipients, one or more, each once. */
  user_ids: quickUserIds(
    userIdsSchema("target 'selected' needs one or more user_ids (or use target 'all')").min(
      1,
      "target 'selected' needs one or more user_ids (or use target 'all')",
    ),
    (length) => length >= 1,
  ),
  /** One to five message items, sent in order. */
  items: ItemsSchema,
});
/** `broadcast` to one user. */
const BroadcastToSingleParamsSchema = z.strictObject({
  /** The one user in `user_ids`. */
  target: z.literal('single'),
  /** The recipient: exactly one. */
  user_ids: quickUserIds(
    userIdsSchema("target 'single' needs user_ids with exactly one user_id").length(
      1,
      "target 'single' takes exactly one user_id",
    ),
    (length) => length === 1,
  ),
  /** One to five message items, sent in order. */
  items: ItemsSchema,
});
/**
 * Endpoint 6: `broadcast`. `all` goes to every user and takes no `user_ids`; `selected` takes one or more;
 * `single` exactly one (the API does not say what it does with more, so the SDK refuses them).
 */
export const BroadcastParamsSchema = z.discriminatedUnion('target', [
  BroadcastToAllParamsSchema,
  BroadcastToSelectedParamsSchema,
  BroadcastToSingleParamsSchema,
]);

/** Endpoint 7: `broadcastToGroup`. */
export const BroadcastToGroupParamsSchema = z.strictObject({
  /** The group (a UUID) whose members receive it. */
  account_provider_group_id: UuidSchema,
  /** One to five message items, sent in order. */
  items: ItemsSchema,
});

/** Endpoint 8: `broadcastToMemberSession`. */
export const BroadcastToMemberSessionParamsSchema = z.strictObject({
  /** The member-group broadcast session (a UUID). */
  member_group_broadcast_id: UuidSchema,
  /** One to five message items, sent in order. */
  items: ItemsSchema,
});

/** Endpoints 9-11 take a multipart file, checked by the upload layer rather than a schema. */
export const UploadParamsSchema = z.unknown();

const OptionalCallbackSchema = z
  .custom<(value: never) => void>((value) => typeof value === 'function', 'Must be a function')
  .optional();

/** The longest delay a Node timer takes; a longer one fires at once (after 1 ms). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A time limit in ms: more than 0 and at most {@link MAX_TIMEOUT_MS}. */
const TimeoutMsSchema = z
  .number()
  .positive()
  .max(MAX_TIMEOUT_MS, `Must be at most ${MAX_TIMEOUT_MS} ms (about 24.8 days)`);

/** An `AbortSignal`, also one from another realm. */
const AbortSignalSchema = z.custom<AbortSignal>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function',
  'Must be an AbortSignal',
);

/** Every method's last argument (`RequestOptions`); methods with more options extend it. */
export const RequestOptionsSchema = z.looseObject({
  /** Cancels the call. */
  signal: AbortSignalSchema.optional(),
  /** The call's deadline in ms. */
  timeoutMs: TimeoutMsSchema.optional(),
  /** This call's retry budget. */
  maxRetries: z.number().int('maxRetries must be a whole number').min(0).max(100).optional(),
  /** Told of the answer that settled the call. */
  onResponse: OptionalCallbackSchema,
});

/** The upload methods' options: the request options, the file's name and type hints, `onProgress`. */
export const UploadOptionsSchema = RequestOptionsSchema.extend({
  /** The file name sent with the upload; by default from the path or the input. */
  filename: z.string().optional(),
  /** The content type sent; by default from the file's bytes. */
  contentType: z.string().optional(),
  /** Called as the bytes leave: `{ loaded, total }`. */
  onProgress: OptionalCallbackSchema,
});

/** `sendVideo`'s `waitForTranscode`: `false`, or how long to wait. */
const WaitForTranscodeSchema = z
  .union([z.literal(false), z.strictObject({ timeoutMs: TimeoutMsSchema.optional() })])
  .optional();

/** `sendVideo`'s options. */
export const SendVideoOptionsSchema = RequestOptionsSchema.extend({
  /** `false`, or `{ timeoutMs }`: how long to wait while the video converts. */
  waitForTranscode: WaitForTranscodeSchema,
});

/** The one-call helpers: who gets the file, and for images an optional link. */
export const SendFileParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** The page that opens when the image is tapped. */
  link: HttpUrlSchema.optional(),
});

/**
 * The one-call helpers' own options, checked with their params before the upload: a mistake in either
 * would otherwise surface only after the file had been stored.
 */
export const SendFileOptionsSchema = UploadOptionsSchema.extend({
  /** Called with the upload's answer once the file is stored, before the send. */
  onUploaded: OptionalCallbackSchema,
  /** `false`, or `{ timeoutMs }`: how long to wait while the video converts. */
  waitForTranscode: WaitForTranscodeSchema,
});

/**
 * The mass broadcasts' own options: the probe user that confirms a video ticket first, and whether to
 * wait for it at all. Request options (`signal`, `timeoutMs`) pass through.
 */
export const BroadcastOptionsSchema = RequestOptionsSchema.extend({
  /** The user who receives a video first, to confirm its transcode. */
  videoProbeUserId: NonBlankSchema.optional(),
  /** `false`, or `{ timeoutMs }`: how long to wait while the video converts. */
  waitForTranscode: WaitForTranscodeSchema,
});

/** `waitForVideo`'s options. */
export const WaitForVideoOptionsSchema = z.strictObject({
  /** The user who receives the video first, to confirm its transcode. */
  probeUserId: NonBlankSchema.optional(),
  /** The call's deadline in ms. */
  timeoutMs: z.number().positive().optional(),
  /** Cancels the call. */
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'Must be an AbortSignal').optional(),
});

// Interfaces rather than aliases of z.input: signatures (in editors and the API reference) then show
// `params: SendTextParams` instead of the type spelled out.
/** `sendGreeting`'s parameters. */
export interface SendGreetingParams extends z.input<typeof SendGreetingParamsSchema> {}
/** `sendImage`'s parameters. */
export interface SendImageParams extends z.input<typeof SendImageParamsSchema> {}
/** `sendText`'s parameters. */
export interface SendTextParams extends z.input<typeof SendTextParamsSchema> {}
/** `sendVideo`'s parameters. */
export interface SendVideoParams extends z.input<typeof SendVideoParamsSchema> {}
/** `sendAudio`'s parameters: the recipient and the four values of `uploadAudio`. */
export interface SendAudioParams extends z.input<typeof SendAudioParamsSchema> {}
/** `broadcast` to every user. */
export interface BroadcastToAllParams extends z.input<typeof BroadcastToAllParamsSchema> {
  /** One to five message items, sent in order. */
  items: MessageItem[];
}
/** `broadcast` to the users in `user_ids`. */
export interface BroadcastToSelectedParams extends z.input<typeof BroadcastToSelectedParamsSchema> {
  /** One to five message items, sent in order. */
  items: MessageItem[];
}
/** `broadcast` to one user. */
export interface BroadcastToSingleParams extends z.input<typeof BroadcastToSingleParamsSchema> {
  /** One to five message items, sent in order. */
  items: MessageItem[];
}
/** `broadcast`'s parameters: who receives it (`target`, `user_ids`) and the items. */
export type BroadcastParams = BroadcastToAllParams | BroadcastToSelectedParams | BroadcastToSingleParams;
/** Who receives a `broadcast`. */
export type BroadcastTarget = BroadcastParams['target'];
/** `broadcastToGroup`'s parameters. */
export interface BroadcastToGroupParams extends z.input<typeof BroadcastToGroupParamsSchema> {
  /** One to five message items, sent in order. */
  items: MessageItem[];
}
/** `broadcastToMemberSession`'s parameters. */
export interface BroadcastToMemberSessionParams extends z.input<typeof BroadcastToMemberSessionParamsSchema> {
  /** One to five message items, sent in order. */
  items: MessageItem[];
}
