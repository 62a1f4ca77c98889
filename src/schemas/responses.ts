import * as z from 'zod/mini';
import { filledExpiresIn } from './token-lifetime.js';

// Response schemas are loose: fields the API adds later pass through untouched, while a missing or
// wrongly typed documented field is an OAResponseValidationError (token answers excepted: the client
// can fill in all but the access token, see TokenPairSchema).

/** The value when it is a string, else `fallback` (a missing key included). */
function stringOr(fallback: string): (value: unknown) => string {
  return (value) => (typeof value === 'string' ? value : fallback);
}

/** A token pair as the client hands it over (`TokenPair`): every documented field, of its documented type. */
const FilledTokenPairSchema = z.looseObject({
  /** The bearer token (a JWT) every other request carries. */
  access_token: z.string().check(z.minLength(1)),
  /**
   * Obtains the next pair (`refreshToken`). `''` when the answer carried none: the client then logs in
   * again where it would refresh.
   */
  refresh_token: z.string(),
  /** `Bearer`; `'Bearer'` too when the answer carried no text. */
  token_type: z.string(),
  /**
   * The access token's lifetime as answered: the text `1h` (documented) or a number of seconds. When
   * the answer stated none that can be read (missing, `null`, `0`, a text without a number): the JWT's
   * `exp - iat` in seconds, else `'1h'`.
   */
  expires_in: z.union([z.string(), z.number()]),
});

/**
 * Endpoints 1 and 2, read tolerantly: the spec's table is all a real server promises, so the one field
 * required is the one nothing works without, `access_token` (a non-empty string; an answer without one
 * is an OAResponseValidationError). The others are filled in when missing or of another type:
 * `refresh_token` with `''`, `token_type` with `'Bearer'`; so is an `expires_in` that states no
 * lifetime, with the JWT's `exp - iat` in seconds, else `'1h'`. Fields the API adds pass through.
 */
export const TokenPairSchema = z.pipe(
  z.pipe(
    // What z.extend(FilledTokenPairSchema, { ... }) makes, built directly: zod/mini's extend pulls a
    // part of zod's core of its own into a bundle.
    z.looseObject({
      ...FilledTokenPairSchema.shape,
      // What z.catch(z.string(), fallback) does, as a transform: zod/mini's catch reaches its helper
      // through the whole util namespace, which then cannot be tree-shaken (about 2 KB gzipped).
      refresh_token: z.transform(stringOr('')),
      token_type: z.transform(stringOr('Bearer')),
      expires_in: z.optional(z.unknown()),
    }),
    z.transform((pair) => ({ ...pair, expires_in: filledExpiresIn(pair.access_token, pair.expires_in) })),
  ),
  FilledTokenPairSchema,
);

/** The single-user sends (endpoints 4, 5, 12, 13) answer with the text `success`. */
export const SuccessSchema = z.literal('success');

/** Endpoint 3: the greeting configured in the OA. */
export const GreetingSchema = z.looseObject({
  /** The greeting's id (a UUID). */
  id: z.string(),
  /** Its title, as set in the OA. */
  title: z.string(),
  /** Its slug, as set in the OA. */
  slug: z.string(),
  /** The messages it sent. */
  data: z.array(
    z.looseObject({
      /** The item type, e.g. `message`. */
      type: z.string(),
      /** The item's content. */
      msg: z.string(),
    }),
  ),
});

/** One item as the API accepted it, inside a broadcast record. */
const AcceptedItemSchema = z.looseObject({
  /** The item type, e.g. `message` or `video`. */
  type: z.string(),
  /** The item's content, as sent. */
  msg: z.union([z.string(), z.array(z.string())]),
});

/** Endpoints 6, 7, 8. */
export const BroadcastRecordSchema = z.looseObject({
  /** The broadcast job's id. */
  id: z.string(),
  /** The items, as the API accepted them. */
  data: z.array(AcceptedItemSchema),
  /** When the job sends (ISO 8601). */
  broadcast_at: z.string(),
  /** When the job was created (ISO 8601). */
  created_at: z.string(),
  /** How long the job is expected to take. */
  estimate_time_detail: z.looseObject({
    /** In minutes. */
    total_job_time_minutes: z.number(),
  }),
});

/** Endpoint 9. */
export const UploadImageResultSchema = z.looseObject({
  /** The stored file's name. */
  src_file: z.string(),
  /** Its public URL, for `sendImage` and image items. */
  url: z.string(),
});
/** Endpoint 10. */
export const UploadVideoResultSchema = z.looseObject({
  /** The transcode job's ticket, for `sendVideo` and video items. */
  ticket_id: z.string(),
});
/** Endpoint 11: all four values go unchanged to `sendAudio` or `items.audio`. */
export const UploadAudioResultSchema = z.looseObject({
  /** The stored file's URL. */
  audio_url: z.string(),
  /** Its id. */
  audio_uuid: z.string(),
  /** Its size in bytes. */
  audio_size: z.number(),
  /** Its duration in seconds. */
  audio_duration: z.number(),
});

// Interfaces rather than aliases of z.infer: signatures (in editors and the API reference) then show
// `Promise<TokenPair>` instead of the type spelled out.
/** A token pair, as endpoints 1 and 2 answer it, with what the answer lacked filled in (see each field). */
export interface TokenPair extends z.infer<typeof TokenPairSchema> {}
/** The answer of the single-user sends: `'success'`. */
export type SendResult = z.infer<typeof SuccessSchema>;
/** The greeting `sendGreeting` sent. */
export interface Greeting extends z.infer<typeof GreetingSchema> {}
/** One item as the API accepted it. */
export interface AcceptedItem extends z.infer<typeof AcceptedItemSchema> {}
/** A broadcast job, as endpoints 6, 7 and 8 answer it. */
export interface BroadcastRecord extends z.infer<typeof BroadcastRecordSchema> {}
/** A stored image. */
export interface UploadImageResult extends z.infer<typeof UploadImageResultSchema> {}
/** A video being transcoded. */
export interface UploadVideoResult extends z.infer<typeof UploadVideoResultSchema> {}
/** A stored audio file: its four values go unchanged to `sendAudio` or `items.audio`. */
export interface UploadAudioResult extends z.infer<typeof UploadAudioResultSchema> {}
