import * as z from 'zod/mini';
import { DescSchema, HttpUrlSchema, NonBlankSchema, UuidSchema } from './common.js';
import { expecting } from './messages.js';

/** A `flex` item carries its layout as a string that must hold a JSON document. */
const JsonDocumentSchema = z.string({ error: expecting('a string holding a JSON object or array') }).check(
  z.refine((s) => {
    try {
      const parsed: unknown = JSON.parse(s);
      return typeof parsed === 'object' && parsed !== null;
    } catch {
      return false;
    }
  }, 'must be a string holding a JSON object or array (JSON.stringify the layout)'),
);

const desc = {
  /** The short text of the push notification (at most 170 characters). */
  desc: z.optional(DescSchema),
};

/** `message`: plain text. */
export const TextItemSchema = z.strictObject({
  /** `message`. */
  type: z.literal('message'),
  /** The text. */
  msg: NonBlankSchema,
  ...desc,
});
/** `image`: a plain image by URL (from `uploadImage`). */
export const ImageItemSchema = z.strictObject({
  /** `image`. */
  type: z.literal('image'),
  /** The image URL. */
  msg: HttpUrlSchema,
  ...desc,
});
/** `oa_image_link`: an image that opens `link` when tapped. */
export const ImageLinkItemSchema = z.strictObject({
  /** `oa_image_link`. */
  type: z.literal('oa_image_link'),
  /** The image URL. */
  msg: HttpUrlSchema,
  /** The page that opens when the image is tapped. */
  link: HttpUrlSchema,
  ...desc,
});
/** `flex`: a flex message layout, as a JSON string. */
export const FlexItemSchema = z.strictObject({
  /** `flex`. */
  type: z.literal('flex'),
  /** The layout, as a JSON string. */
  msg: JsonDocumentSchema,
  ...desc,
});
/** `video`: the `ticket_id` of `uploadVideo`; the transcode must have finished when the job runs. */
export const VideoItemSchema = z.strictObject({
  /** `video`. */
  type: z.literal('video'),
  /** The `ticket_id` of the video upload. */
  msg: UuidSchema,
  ...desc,
});
/** `audio`: the four values of `uploadAudio`, passed through unchanged. */
export const AudioItemSchema = z.strictObject({
  /** `audio`. */
  type: z.literal('audio'),
  /** `audio_url` of the audio upload. */
  msg: HttpUrlSchema,
  /** `audio_uuid` of the audio upload. */
  audio_uuid: UuidSchema,
  /** `audio_size` of the audio upload (bytes). */
  audio_size: z.number().check(z.int(), z.positive()),
  /** `audio_duration` of the audio upload (seconds). */
  audio_duration: z.number().check(z.nonnegative()),
  ...desc,
});

/** One element of `items` in the mass, group and member-session broadcasts: a union on `type`. */
export const MessageItemSchema = z.discriminatedUnion(
  'type',
  [TextItemSchema, ImageItemSchema, ImageLinkItemSchema, FlexItemSchema, VideoItemSchema, AudioItemSchema],
  { error: expecting('a message item (an object with a type, e.g. from items.text())') },
);

// Interfaces rather than aliases of z.infer, so that signatures name them.
/** A `message` item: plain text. */
export interface TextItem extends z.infer<typeof TextItemSchema> {}
/** An `image` item: a plain image by URL. */
export interface ImageItem extends z.infer<typeof ImageItemSchema> {}
/** An `oa_image_link` item: an image that opens `link` when tapped. */
export interface ImageLinkItem extends z.infer<typeof ImageLinkItemSchema> {}
/** A `flex` item: a layout as a JSON string. */
export interface FlexItem extends z.infer<typeof FlexItemSchema> {}
/** A `video` item: the `ticket_id` of a video upload. */
export interface VideoItem extends z.infer<typeof VideoItemSchema> {}
/** An `audio` item: the four values of an audio upload. */
export interface AudioItem extends z.infer<typeof AudioItemSchema> {}
/** A message item; a discriminated union on `type`, so a wrong item does not compile. */
export type MessageItem = TextItem | ImageItem | ImageLinkItem | FlexItem | VideoItem | AudioItem;
/** The item types of the API. */
export type MessageItemType = MessageItem['type'];
