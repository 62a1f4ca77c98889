import { z } from 'zod';
import { HttpUrlSchema, MAX_ITEMS, NonBlankSchema, UuidSchema } from './common.js';
import { MessageItemSchema } from './items.js';

/** Endpoint 1 body. */
export const GenerateTokenParamsSchema = z.strictObject({
  api_key: NonBlankSchema,
  api_secret: NonBlankSchema,
});
/** Endpoint 2 body. */
export const RefreshTokenParamsSchema = z.strictObject({ refresh_token: NonBlankSchema });

/** Endpoint 3: `sendGreeting`. */
export const SendGreetingParamsSchema = z.strictObject({ user_id: NonBlankSchema });

/** Endpoint 4: `sendImage`. Without `link` the image is plain. */
export const SendImageParamsSchema = z.strictObject({
  user_id: NonBlankSchema,
  image_url: HttpUrlSchema,
  link: HttpUrlSchema.optional(),
});

/** Endpoint 5: `sendText`. `desc` is the short text of the push notification. */
export const SendTextParamsSchema = z.strictObject({
  user_id: NonBlankSchema,
  msg: NonBlankSchema,
  desc: z.string().optional(),
});

/** Endpoint 12: `sendVideo`. */
export const SendVideoParamsSchema = z.strictObject({ user_id: NonBlankSchema, ticket_id: UuidSchema });

/**
 * Endpoint 13: `sendAudio`; the four audio values come unchanged from `uploadAudio`. Unlike the other
 * requests, unknown fields are dropped rather than refused, so that `{ user_id, ...upload }` keeps
 * working when the upload answer gains a field; every field is required, so a misspelt one still
 * fails as missing.
 */
export const SendAudioParamsSchema = z.object({
  user_id: NonBlankSchema,
  audio_url: HttpUrlSchema,
  audio_uuid: UuidSchema,
  audio_size: z.number().int().positive(),
  audio_duration: z.number().nonnegative(),
});

const ItemsSchema = z
  .array(MessageItemSchema)
  .min(1, 'At least one item is required')
  .max(MAX_ITEMS, `At most ${MAX_ITEMS} items per broadcast`);

const UserIdsSchema = z
  .array(NonBlankSchema)
  .refine((ids) => new Set(ids).size === ids.length, 'Must not repeat a user_id (it would be sent twice)');

/**
 * Endpoint 6: `broadcast`. `all` goes to every user and takes no `user_ids`; `selected` takes one or more;
 * `single` exactly one (the API does not say what it does with more, so the SDK refuses them).
 */
export const BroadcastParamsSchema = z.discriminatedUnion('target', [
  z.strictObject({ target: z.literal('all'), items: ItemsSchema }),
  z.strictObject({
    target: z.literal('selected'),
    user_ids: UserIdsSchema.min(1, "target 'selected' needs at least one user_id"),
    items: ItemsSchema,
  }),
  z.strictObject({
    target: z.literal('single'),
    user_ids: UserIdsSchema.length(1, "target 'single' takes exactly one user_id"),
    items: ItemsSchema,
  }),
]);

/** Endpoint 7: `broadcastToGroup`. */
export const BroadcastToGroupParamsSchema = z.strictObject({
  account_provider_group_id: UuidSchema,
  items: ItemsSchema,
});

/** Endpoint 8: `broadcastToMemberSession`. */
export const BroadcastToMemberSessionParamsSchema = z.strictObject({
  member_group_broadcast_id: UuidSchema,
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
export const TimeoutMsSchema = z
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
  signal: AbortSignalSchema.optional(),
  timeoutMs: TimeoutMsSchema.optional(),
  maxRetries: z.number().int('maxRetries must be a whole number').min(0).max(100).optional(),
  onResponse: OptionalCallbackSchema,
});

/** The upload methods' options: the request options, the file's name and type hints, `onProgress`. */
export const UploadOptionsSchema = RequestOptionsSchema.extend({
  filename: z.string().optional(),
  contentType: z.string().optional(),
  onProgress: OptionalCallbackSchema,
});

/** `sendVideo`'s `waitForTranscode`: `false`, or how long to wait. */
export const WaitForTranscodeSchema = z
  .union([z.literal(false), z.strictObject({ timeoutMs: TimeoutMsSchema.optional() })])
  .optional();

/** `sendVideo`'s options. */
export const SendVideoOptionsSchema = RequestOptionsSchema.extend({
  waitForTranscode: WaitForTranscodeSchema,
});

/** The one-call helpers: who gets the file, and for images an optional link. */
export const SendFileParamsSchema = z.strictObject({
  user_id: NonBlankSchema,
  link: HttpUrlSchema.optional(),
});

/**
 * The one-call helpers' own options, checked with their params before the upload: a mistake in either
 * would otherwise surface only after the file had been stored.
 */
export const SendFileOptionsSchema = UploadOptionsSchema.extend({
  onUploaded: OptionalCallbackSchema,
  waitForTranscode: WaitForTranscodeSchema,
});

/**
 * The mass broadcasts' own options: the probe user that confirms a video ticket first, and whether to
 * wait for it at all. Request options (`signal`, `timeoutMs`) pass through.
 */
export const BroadcastOptionsSchema = z.looseObject({
  videoProbeUserId: NonBlankSchema.optional(),
  waitForTranscode: WaitForTranscodeSchema,
});

/** `waitForVideo`'s options. */
export const WaitForVideoOptionsSchema = z.strictObject({
  probeUserId: NonBlankSchema.optional(),
  timeoutMs: z.number().positive().optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'Must be an AbortSignal').optional(),
});

export type SendGreetingParams = z.input<typeof SendGreetingParamsSchema>;
export type SendImageParams = z.input<typeof SendImageParamsSchema>;
export type SendTextParams = z.input<typeof SendTextParamsSchema>;
export type SendVideoParams = z.input<typeof SendVideoParamsSchema>;
export type SendAudioParams = z.input<typeof SendAudioParamsSchema>;
export type BroadcastParams = z.input<typeof BroadcastParamsSchema>;
export type BroadcastTarget = BroadcastParams['target'];
export type BroadcastToGroupParams = z.input<typeof BroadcastToGroupParamsSchema>;
export type BroadcastToMemberSessionParams = z.input<typeof BroadcastToMemberSessionParamsSchema>;
