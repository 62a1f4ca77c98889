import * as z from 'zod/mini';
import { HttpUrlSchema, MAX_ITEMS, NonBlankSchema, UuidSchema } from './common.js';
import { HOOKS_RULE, isHooks, type OAHooks } from './hooks.js';
import { type MessageItem, MessageItemSchema } from './items.js';
import { expecting, IN_WORDS } from './messages.js';

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
  link: z.optional(HttpUrlSchema),
});

/** Endpoint 5: `sendText`. `desc` is the short text of the push notification. */
export const SendTextParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** The content: a text, an image URL, a ticket id, a flex layout, an audio URL. */
  msg: NonBlankSchema,
  /**
   * The short text of the push notification. The API documents no length limit for it (its 170
   * characters are those of a broadcast item's `desc`), so none is enforced here.
   */
  desc: z.optional(z.string({ error: expecting('a string') })),
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
  audio_size: z.number().check(z.int(), z.positive()),
  /** `audio_duration` of the audio upload (seconds). */
  audio_duration: z.number().check(z.nonnegative()),
});

const ItemsSchema = z
  .array(MessageItemSchema, { error: expecting(`1 to ${MAX_ITEMS} message items (an array)`) })
  .check(
    z.minLength(1, `must hold 1 to ${MAX_ITEMS} message items, not none: add one (e.g. items.text('Hello'))`),
    z.maxLength(MAX_ITEMS, `must hold 1 to ${MAX_ITEMS} message items: send the rest in another broadcast`),
  );

/**
 * `user_ids`; `missing`: what to say when it is left out (zod's own words name no field and no fix);
 * `size`: the check of how many it holds.
 */
const userIdsSchema = (missing: string, size: z.core.$ZodCheck<string[]>) =>
  z
    .array(NonBlankSchema, {
      error: (issue) =>
        issue.code !== 'invalid_type'
          ? undefined
          : issue.input === undefined
            ? missing
            : 'must be an array of user_id strings',
    })
    .check(
      z.refine(
        (ids) => new Set(ids).size === ids.length,
        'must not repeat a user_id (it would be sent twice): remove the repeats',
      ),
      size,
    );

/** Whether `id` is a string with something besides white space (what `NonBlankSchema` accepts). */
const isUserId = (id: unknown): boolean => {
  if (typeof id !== 'string' || id.length === 0) return false;
  const first = id.charCodeAt(0);
  // A printable ASCII first character is not white space: most ids are settled without trim().
  return (first > 0x20 && first < 0x7f) || id.trim().length > 0;
};

/**
 * Whether no id in a `user_ids` list is repeated: the same answer as a Set's, by the means that suit the
 * runtime. The endpoint table passes the runtime's (hashed in typed tables on Node, Bun and Deno, a Set
 * on workerd), so that these schemas import nothing of the runtime.
 */
type RepeatCheck = (ids: readonly string[]) => boolean;

/**
 * `full`, with a fast path: a list that passes (an array of non-blank user_ids, none repeated by
 * `allDistinct`, of a length `fits` accepts) is accepted by one loop and one repeat check, not an
 * element schema per user_id, which dominated the cost of a broadcast to 100,000 users. Any other value
 * gets `full`'s issues, exactly.
 */
const quickUserIds = (
  full: z.ZodMiniType<string[]>,
  fits: (length: number) => boolean,
  allDistinct: RepeatCheck,
) =>
  z.custom<string[]>().check((ctx) => {
    const ids = ctx.value;
    if (Array.isArray(ids) && fits(ids.length) && ids.every(isUserId) && allDistinct(ids)) {
      return;
    }
    const result = full.safeParse(ids, IN_WORDS);
    if (result.success) return;
    for (const issue of result.error.issues)
      ctx.issues.push({ ...issue, input: ids } as (typeof ctx.issues)[number]);
  });

/** Endpoint 6, `broadcast` to every user: no `user_ids`. */
const BroadcastToAllParamsSchema = z.strictObject(
  {
    /** Every user of the OA. */
    target: z.literal('all'),
    /** One to five message items, sent in order. */
    items: ItemsSchema,
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys' && issue.keys.length === 1 && issue.keys[0] === 'user_ids'
        ? "user_ids: not allowed with target 'all' (use target 'selected', or drop user_ids)"
        : undefined,
  },
);
/** `broadcast` to the users in `user_ids`, repeats found by `allDistinct`. */
const broadcastToSelectedParamsSchema = (allDistinct: RepeatCheck) =>
  z.strictObject({
    /** The users in `user_ids`. */
    target: z.literal('selected'),
    /** The recipients, one or more, each once. */
    user_ids: quickUserIds(
      userIdsSchema(
        "required with target 'selected': one or more user_ids (or use target 'all')",
        z.minLength(1, "must hold one or more user_ids with target 'selected' (or use target 'all')"),
      ),
      (length) => length >= 1,
      allDistinct,
    ),
    /** One to five message items, sent in order. */
    items: ItemsSchema,
  });
/** `broadcast` to one user, repeats found by `allDistinct`. */
const broadcastToSingleParamsSchema = (allDistinct: RepeatCheck) =>
  z.strictObject({
    /** The one user in `user_ids`. */
    target: z.literal('single'),
    /** The recipient: exactly one. */
    user_ids: quickUserIds(
      userIdsSchema(
        "required with target 'single': exactly one user_id",
        z.length(1, "must hold exactly one user_id with target 'single' (or use target 'selected')"),
      ),
      (length) => length === 1,
      allDistinct,
    ),
    /** One to five message items, sent in order. */
    items: ItemsSchema,
  });
/**
 * Endpoint 6: `broadcast`. `all` goes to every user and takes no `user_ids`; `selected` takes one or more;
 * `single` exactly one (the API does not say what it does with more, so the SDK refuses them). Repeats
 * in `user_ids` are found by `allDistinct`, the runtime's check (made once, by the endpoint table).
 */
export const broadcastParamsSchema = (allDistinct: RepeatCheck) =>
  z.discriminatedUnion('target', [
    BroadcastToAllParamsSchema,
    broadcastToSelectedParamsSchema(allDistinct),
    broadcastToSingleParamsSchema(allDistinct),
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

/** A callback: a function when given. */
const callbackSchema = <F>() =>
  z.optional(z.custom<F>((value) => typeof value === 'function', 'must be a function'));

/** The longest delay a Node timer takes; a longer one fires at once (after 1 ms). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A time limit in ms: more than 0 and at most {@link MAX_TIMEOUT_MS}. */
const TimeoutMsSchema = z
  .number()
  .check(z.positive(), z.lte(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} ms (about 24.8 days)`));

/** An `AbortSignal`, also one from another realm. */
const AbortSignalSchema = z.custom<AbortSignal>(
  (value) =>
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function',
  'must be an AbortSignal',
);

/** The answer that settled a call, as `onResponse` receives it. */
export interface OAResponseInfo {
  /** The HTTP status, a 2xx. */
  status: number;
  /** The answer's headers, names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The `x-request-id` header, when the server sent one. */
  requestId: string | undefined;
  /** Which attempt of the call this was: 1, then 2 after a retry... */
  attempt: number;
}

/** How much of the file has gone out. `total` is unknown for a stream of unknown length. */
export interface UploadProgress {
  /** Bytes sent so far. */
  loaded: number;
  /** All the bytes, when known. */
  total: number | undefined;
}

// Each option type is the `z.input` of its `...Fields` object, whose TSDoc on each property is what
// editors and the API reference show. The schemas that check them are loose (an unknown option is
// let through at run time), but a loose object's `z.input` has an index signature, which would let a
// misspelt option through the compiler: hence the fields apart.

const RequestOptionsFields = z.object({
  /**
   * Cancels the call wherever it is (the rate limiter's queue, the token, a backoff, the transcode
   * wait, the request itself); the call rejects with `OAAbortError`.
   */
  signal: z.optional(AbortSignalSchema),
  /**
   * The call's deadline in ms (1 to 2^31-1): it bounds everything the call waits for (the rate
   * limiter's queue, a login or refresh, Redis round trips, backoffs) and each attempt. Past it the
   * call rejects with `OATimeoutError`; `deliveryUnknown` says whether a send may have gone out.
   * @default none: each attempt is bounded by the client's `timeoutMs`, and a call waits its turn in
   * the rate limiter however long the queue
   */
  timeoutMs: z.optional(TimeoutMsSchema),
  /**
   * This call's own retry budget, in place of the client's `maxRetries` (0: no retry). Retries that
   * wait on 429 and `JOB_BUSY` do not use it up.
   * @default the client's `maxRetries`
   */
  maxRetries: z.optional(z.number().check(z.int('must be a whole number'), z.gte(0), z.lte(100))),
  /**
   * Called with the answer that settled the call, before the call resolves: its status, headers and
   * `x-request-id`, for your logs or a support ticket. An error answer carries them on the error
   * (`OAApiError.requestId`) instead.
   * @example await client.sendText(params, { onResponse: (r) => log.info('sent', { id: r.requestId }) })
   */
  onResponse: callbackSchema<(response: OAResponseInfo) => void>(),
  /**
   * This call's own hooks, run after the client's (`hooks` option): `aroundCall` around this call,
   * `beforeSend` just before each of its attempts leaves, `notDelivered` after each attempt that
   * certainly did not deliver. The outbox records a send's "may have left" through them.
   * @default none: the client's hooks only
   */
  hooks: z.optional(z.custom<OAHooks>(isHooks, HOOKS_RULE)),
  /**
   * A campaign's send: it yields to the account's other sends. In the client's rate limiter it waits
   * behind every other queued request, and with a Redis `coordination` also while another process
   * has a request of the same api key waiting for a slot: a reply sent while a campaign fills the
   * quota goes out with the next free slot. The outbox sets it for jobs added with `bulk: true`.
   * @default false
   */
  bulk: z.optional(z.boolean()),
  /**
   * With `bulk: true`: the share of each window of the client's general quota (0 to under 1) that
   * bulk sends leave to the account's other requests: they hold at most `max - ceil(replyReserve *
   * max)` slots of it (at least one), and go at a pace, one per window over those slots, instead of
   * taking the window in a burst as it opens, so a reply made while a campaign runs finds a slot at
   * once. With a Redis `coordination` every process keeps the same reserve and pace. The outbox sets
   * it from its own `replyReserve`. 0: bulk sends only queue behind the others, and take every slot.
   * @default 0
   */
  replyReserve: z.optional(
    z.number().check(z.gte(0, 'must be from 0 to under 1'), z.lt(1, 'must be from 0 to under 1')),
  ),
});

/** Every method's last argument (`RequestOptions`); methods with more options extend it. */
export const RequestOptionsSchema = z.catchall(RequestOptionsFields, z.unknown());

/**
 * {@link RequestOptionsSchema} with more fields: the schema `z.extend(RequestOptionsSchema, fields)`
 * makes, built directly. zod/mini's `extend` pulls a part of zod's core of its own into a bundle.
 */
const withRequestOptions = <S extends z.core.$ZodShape>(fields: S) =>
  z.catchall(z.object({ ...RequestOptionsFields.shape, ...fields }), z.unknown());

/** Per-call options, the last argument of every method. Every property also accepts `undefined`. */
export interface RequestOptions extends z.input<typeof RequestOptionsFields> {}

const UploadOptionsFields = z.object({
  /**
   * The file name sent in the multipart part; by default the path's base name, else a File's `name`,
   * else `<kind>.<ext>` from the detected format.
   */
  filename: z.optional(z.string()),
  /** A hint for the format when the bytes alone are ambiguous; what is sent follows the bytes. */
  contentType: z.optional(z.string()),
  /** Called as the file's bytes go out (and again from 0 if the upload is retried). */
  onProgress: callbackSchema<(progress: UploadProgress) => void>(),
});

/** The upload methods' options: the request options, the file's name and type hints, `onProgress`. */
export const UploadOptionsSchema = withRequestOptions(UploadOptionsFields.shape);

/** Options of `uploadImage`, `uploadVideo` and `uploadAudio`. */
export interface UploadOptions extends RequestOptions, z.input<typeof UploadOptionsFields> {}

const WaitForTranscodeFields = z.strictObject({
  /** @default 600_000 (10 minutes) */
  timeoutMs: z.optional(TimeoutMsSchema),
});

/** How long `sendVideo` waits for a ticket still in convert status. */
export interface WaitForTranscodeOptions extends z.input<typeof WaitForTranscodeFields> {}

/** `waitForTranscode` as an object, typed by its interface so that signatures name it. */
const WaitForTranscodeOptionsSchema: z.ZodMiniType<WaitForTranscodeOptions, WaitForTranscodeOptions> =
  WaitForTranscodeFields;

/** `sendVideo`'s `waitForTranscode`: `false`, or how long to wait. */
const WaitForTranscodeSchema = z.optional(z.union([z.literal(false), WaitForTranscodeOptionsSchema]));

const SendVideoOptionsFields = z.object({
  /**
   * While the ticket is in convert status, wait and try again (after a quarter of the time waited so
   * far: 250 ms at first, at most 10 s) for up to `timeoutMs`, then `OATranscodeTimeoutError`.
   * `false` fails at once with the API's `OABadRequestError`.
   * @default { timeoutMs: 600_000 }
   */
  waitForTranscode: WaitForTranscodeSchema,
});

/** `sendVideo`'s options. */
export const SendVideoOptionsSchema = withRequestOptions(SendVideoOptionsFields.shape);

/** Options of `sendVideo` and `sendVideoFile`. */
export interface SendVideoOptions extends RequestOptions, z.input<typeof SendVideoOptionsFields> {}

/** The one-call helpers: who gets the file, and for images an optional link. */
export const SendFileParamsSchema = z.strictObject({
  /** The user who receives it. */
  user_id: NonBlankSchema,
  /** The page that opens when the image is tapped. */
  link: z.optional(HttpUrlSchema),
});

/**
 * The one-call helpers' own options, checked with their params before the upload: a mistake in either
 * would otherwise surface only after the file had been stored.
 */
export const SendFileOptionsSchema = withRequestOptions({
  ...UploadOptionsFields.shape,
  /** Called with the upload's answer once the file is stored, before the send. */
  onUploaded: callbackSchema<(upload: never) => void>(),
  waitForTranscode: WaitForTranscodeSchema,
});

/** Options of the one-call helpers `sendImageFile`, `sendAudioFile` and `sendVideoFile`. */
export interface SendFileOptions<U> extends UploadOptions {
  // By hand: a schema cannot carry the type parameter; `SendFileOptionsSchema` checks it is a function.
  /**
   * Called with the upload's answer once the file is stored, before the send. Should the send fail,
   * this is what lets you send the stored file without uploading it again (a video's `ticket_id`, an
   * image's `url`, the values `sendAudio` takes).
   */
  onUploaded?: ((upload: U) => void) | undefined;
}

const BroadcastOptionsFields = z.object({
  /**
   * Confirms a video ticket not known to be ready by sending the video to this user first (your own
   * test account), waiting while it converts; overrides the client's `videoProbeUserId`.
   * @default the client's `videoProbeUserId`
   */
  videoProbeUserId: z.optional(NonBlankSchema),
  /**
   * How long to wait for a video ticket in convert status before broadcasting it (probe sends spaced
   * as `sendVideo` spaces its tries), then `OATranscodeTimeoutError` with nothing broadcast. `false`
   * broadcasts at once: a ticket still converting then makes the broadcast's job fail.
   * @default { timeoutMs: 600_000 }
   */
  waitForTranscode: WaitForTranscodeSchema,
});

/**
 * The mass broadcasts' own options: the probe user that confirms a video ticket first, and whether to
 * wait for it at all. Request options (`signal`, `timeoutMs`) pass through.
 */
export const BroadcastOptionsSchema = withRequestOptions(BroadcastOptionsFields.shape);

/** Options of `broadcast`, `broadcastToGroup` and `broadcastToMemberSession`. */
export interface BroadcastOptions extends RequestOptions, z.input<typeof BroadcastOptionsFields> {}

/** `waitForVideo`'s options. */
export const WaitForVideoOptionsSchema = z.strictObject({
  /**
   * The user who receives the video if the ticket is not known to be ready.
   * @default the client's `videoProbeUserId`
   */
  probeUserId: z.optional(NonBlankSchema),
  /**
   * The longest wait while the ticket converts, then `OATranscodeTimeoutError`.
   * @default 600_000 (10 minutes)
   */
  timeoutMs: z.optional(z.number().check(z.positive())),
  /** Cancels the wait (`OAAbortError`). */
  signal: z.optional(
    z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal'),
  ),
});

/** Options of `waitForVideo`. */
export interface WaitForVideoOptions extends z.input<typeof WaitForVideoOptionsSchema> {}

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
export interface BroadcastToSelectedParams
  extends z.input<ReturnType<typeof broadcastToSelectedParamsSchema>> {
  /** One to five message items, sent in order. */
  items: MessageItem[];
}
/** `broadcast` to one user. */
export interface BroadcastToSingleParams extends z.input<ReturnType<typeof broadcastToSingleParamsSchema>> {
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
