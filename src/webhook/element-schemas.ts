/**
 * Schemas of the elements of `MsgBody` in a Tencent Cloud Chat (IM) message callback, the `data` of an
 * inbound OA webhook event. Field names are Tencent's own, as its "Message Formats" page shows them.
 *
 * Tolerance rules, because the OA service passes Tencent's payload through and Tencent's SDK versions
 * differ (old ones send sound, file and video elements without URLs):
 * - unknown fields are kept (`z.looseObject`);
 * - only the fields without which an element means nothing are required (the `Text` of a text, the
 *   coordinates of a location, the `Index` of a face, the `ImageInfoArray` of an image); the rest may be
 *   missing;
 * - numbers that arrive as numeric strings are accepted and become numbers.
 */
import * as z from 'zod/mini';
import { ZOD_WORDS } from '../schemas/messages.js';
import { NUMERIC_STRING } from './compiled.js';

/**
 * A number that may arrive as a numeric string (Tencent's samples carry `EventTime` as `"1670574414123"`).
 * A non-numeric string is refused with zod's usual "expected number" message.
 */
export const NumberLikeSchema = z.pipe(z.transform(numberLike), z.number());

/** What {@link NumberLikeSchema} checks: a numeric string as a number, anything else as it is. */
function numberLike(value: unknown): unknown {
  return typeof value === 'string' && NUMERIC_STRING.test(value) ? Number(value) : value;
}

/**
 * A string that may arrive as a number: Tencent UserIDs and group IDs are strings, but numeric ones are
 * sometimes sent as JSON numbers. Only finite numbers become strings; anything else is refused.
 */
export const StringLikeSchema = z.pipe(z.transform(stringLike), z.string());

/** What {@link StringLikeSchema} checks: a finite number as a string, anything else as it is. */
function stringLike(value: unknown): unknown {
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
}

/** `TIMTextElem` content: plain text. */
const TextContentSchema = z.looseObject({
  /** The text. */
  Text: z.string(),
});

/** `TIMLocationElem` content: a place. */
const LocationContentSchema = z.looseObject({
  /** A description; for a custom element, its text. */
  Desc: z.optional(z.string()),
  /** Its latitude. */
  Latitude: NumberLikeSchema,
  /** Its longitude. */
  Longitude: NumberLikeSchema,
});

/** `TIMFaceElem` content: an emoji/sticker; `Index` and `Data` are the app's own convention. */
const FaceContentSchema = z.looseObject({
  /** The index of the face (sticker). */
  Index: NumberLikeSchema,
  /** The payload, as the sender gave it. */
  Data: z.optional(z.string()),
});

/** `TIMCustomElem` content: an app-defined payload (`Data` is often JSON in a string). */
const CustomContentSchema = z.looseObject({
  /** The payload, as the sender gave it. */
  Data: z.optional(z.string()),
  /** A description; for a custom element, its text. */
  Desc: z.optional(z.string()),
  /** Extra data for the push notification or the element. */
  Ext: z.optional(z.string()),
  /** The sound to play on arrival. */
  Sound: z.optional(z.string()),
});

/** `TIMSoundElem` content: a voice message. `Url` is missing from SDK 2.x/3.x senders. */
const SoundContentSchema = z.looseObject({
  /** Where to download it (signed, temporary: fetch it at once). */
  Url: z.optional(z.string()),
  /** The file's id in the IM service. */
  UUID: z.optional(z.string()),
  /** Bytes. */
  Size: z.optional(NumberLikeSchema),
  /** Duration in seconds. */
  Second: z.optional(NumberLikeSchema),
  /** Currently always 2: downloadable from `Url`. */
  Download_Flag: z.optional(NumberLikeSchema),
});

/** One variant of an image. `Type`: 1 original, 2 large, 3 thumbnail. Width/Height 0 mean unknown. */
const ImageInfoSchema = z.looseObject({
  /** The kind of entry: for an image, 1 original, 2 large, 3 thumbnail. */
  Type: NumberLikeSchema,
  /** Its size in bytes. */
  Size: z.optional(NumberLikeSchema),
  /** Its width in pixels. */
  Width: z.optional(NumberLikeSchema),
  /** Its height in pixels. */
  Height: z.optional(NumberLikeSchema),
  /** Where to download it (signed, temporary: fetch it at once). */
  URL: z.optional(z.string()),
});

/** `TIMImageElem` content. `ImageFormat`: 1 JPG, 2 GIF, 3 PNG, 4 BMP, 255 other. */
const ImageContentSchema = z.looseObject({
  /** The file's id in the IM service. */
  UUID: z.optional(z.string()),
  /** The image format (1 JPG, 2 GIF, 3 PNG, 4 BMP, 255 other). */
  ImageFormat: z.optional(NumberLikeSchema),
  /** The image in its sizes: original, large, thumbnail. */
  ImageInfoArray: z.array(ImageInfoSchema),
});

/** `TIMFileElem` content. `Url` is missing from SDK 2.x/3.x senders. */
const FileContentSchema = z.looseObject({
  /** Where to download it (signed, temporary: fetch it at once). */
  Url: z.optional(z.string()),
  /** The file's id in the IM service. */
  UUID: z.optional(z.string()),
  /** Bytes. */
  FileSize: z.optional(NumberLikeSchema),
  /** The file's name. */
  FileName: z.optional(z.string()),
  /** How it can be downloaded (2: by `Url`). */
  Download_Flag: z.optional(NumberLikeSchema),
});

/** `TIMVideoFileElem` content. `VideoUrl` and `ThumbUrl` are missing from SDK 2.x/3.x senders. */
const VideoFileContentSchema = z.looseObject({
  /** Where to download the video (signed, temporary). */
  VideoUrl: z.optional(z.string()),
  /** The video's id in the IM service. */
  VideoUUID: z.optional(z.string()),
  /** Bytes. */
  VideoSize: z.optional(NumberLikeSchema),
  /** Duration in seconds. */
  VideoSecond: z.optional(NumberLikeSchema),
  /** The video's format, e.g. `mp4`. */
  VideoFormat: z.optional(z.string()),
  /** How the video can be downloaded (2: by `VideoUrl`). */
  VideoDownloadFlag: z.optional(NumberLikeSchema),
  /** Where to download the thumbnail (signed, temporary). */
  ThumbUrl: z.optional(z.string()),
  /** The thumbnail's id in the IM service. */
  ThumbUUID: z.optional(z.string()),
  /** The thumbnail's size in bytes. */
  ThumbSize: z.optional(NumberLikeSchema),
  /** The thumbnail's width in pixels. */
  ThumbWidth: z.optional(NumberLikeSchema),
  /** The thumbnail's height in pixels. */
  ThumbHeight: z.optional(NumberLikeSchema),
  /** The thumbnail's format. */
  ThumbFormat: z.optional(z.string()),
  /** How the thumbnail can be downloaded. */
  ThumbDownloadFlag: z.optional(NumberLikeSchema),
});

/**
 * `TIMRelayElem` content: a merged forward of several messages. `MsgList` holds the forwarded messages
 * as Tencent sends them (not validated further); newer SDKs send `JsonMsgKey` instead.
 */
const RelayContentSchema = z.looseObject({
  /** Its title. */
  Title: z.optional(z.string()),
  /** How many messages the relay holds. */
  MsgNum: z.optional(NumberLikeSchema),
  /** A text shown by clients that cannot show the element. */
  CompatibleText: z.optional(z.string()),
  /** The summary lines of the relayed messages. */
  AbstractList: z.optional(z.array(z.string())),
  /** The relayed messages. */
  MsgList: z.optional(z.array(z.looseObject({}))),
  /** The key of the relayed messages. */
  JsonMsgKey: z.optional(z.string()),
});

const element = <T extends string, C extends z.ZodMiniType>(type: T, content: C) =>
  z.looseObject({
    /** The element type, e.g. `TIMTextElem`. */
    MsgType: z.literal(type),
    /** The element's content; its fields depend on `MsgType`. */
    MsgContent: content,
  });

/** A text element. */
export const TextElemSchema = element('TIMTextElem', TextContentSchema);
/** A location element. */
export const LocationElemSchema = element('TIMLocationElem', LocationContentSchema);
/** An emoji (face) element. */
export const FaceElemSchema = element('TIMFaceElem', FaceContentSchema);
/** A custom element. */
export const CustomElemSchema = element('TIMCustomElem', CustomContentSchema);
/** A voice element. */
export const SoundElemSchema = element('TIMSoundElem', SoundContentSchema);
/** An image element. */
export const ImageElemSchema = element('TIMImageElem', ImageContentSchema);
/** A file element. */
export const FileElemSchema = element('TIMFileElem', FileContentSchema);
/** A video element. */
export const VideoFileElemSchema = element('TIMVideoFileElem', VideoFileContentSchema);
/** A merged-forward element. */
export const RelayElemSchema = element('TIMRelayElem', RelayContentSchema);

/** Every element type Tencent documents, as a discriminated union on `MsgType`. */
export const KnownMsgBodyElementSchema = z.discriminatedUnion('MsgType', [
  TextElemSchema,
  LocationElemSchema,
  FaceElemSchema,
  CustomElemSchema,
  SoundElemSchema,
  ImageElemSchema,
  FileElemSchema,
  VideoFileElemSchema,
  RelayElemSchema,
]);

/** A text element (`TIMTextElem`). */
export type TextElem = z.infer<typeof TextElemSchema>;
/** A location element (`TIMLocationElem`). */
export type LocationElem = z.infer<typeof LocationElemSchema>;
/** An emoji element (`TIMFaceElem`). */
export type FaceElem = z.infer<typeof FaceElemSchema>;
/** A custom element (`TIMCustomElem`). */
export type CustomElem = z.infer<typeof CustomElemSchema>;
/** A voice element (`TIMSoundElem`). */
export type SoundElem = z.infer<typeof SoundElemSchema>;
/** An image element (`TIMImageElem`). */
export type ImageElem = z.infer<typeof ImageElemSchema>;
/** One rendition in `ImageInfoArray`. */
export type ImageInfo = z.infer<typeof ImageInfoSchema>;
/** A file element (`TIMFileElem`). */
export type FileElem = z.infer<typeof FileElemSchema>;
/** A video element (`TIMVideoFileElem`). */
export type VideoFileElem = z.infer<typeof VideoFileElemSchema>;
/** A merged-forward element (`TIMRelayElem`). */
export type RelayElem = z.infer<typeof RelayElemSchema>;
/** An element of a documented type. */
export type KnownMsgBodyElement = z.infer<typeof KnownMsgBodyElementSchema>;
/** The documented `MsgType` values. */
export type KnownMsgType = KnownMsgBodyElement['MsgType'];

/**
 * An element of a type this SDK does not know (a newer Tencent type), kept as it arrived; or an element
 * of a known type that does not match its schema (a text element without `Text`), kept with its
 * `MsgType` marked `"TIMTextElem (invalid)"`, so that a `switch` never sees a known type without its
 * content. What did not match is in `event.issues`.
 *
 * At run time `MsgType` holds the type's name, a string. It is typed `never` on purpose: TypeScript has
 * no "any string but these" type, and a plain `string` here would stop `switch (element.MsgType)` from
 * narrowing `MsgContent` for the known types. Handle these in the `default` branch and read the name with
 * `String(element.MsgType)`.
 */
export interface UnknownMsgBodyElement {
  /** The element type's name, typed `never` (see above). */
  MsgType: never;
  /** The element's content, as it arrived. */
  MsgContent?: unknown;
  [key: string]: unknown;
}

/** One element of `MsgBody`: a known type (narrow with `switch (element.MsgType)`) or an unknown one. */
export type MsgBodyElement = KnownMsgBodyElement | UnknownMsgBodyElement;

const KNOWN_MSG_TYPES: ReadonlySet<string> = new Set(
  KnownMsgBodyElementSchema.def.options.flatMap((option) => option.shape.MsgType.def.values),
);

/** `true` when `element` is of a type Tencent documents (and this SDK types). */
export function isKnownMsgBodyElement(element: MsgBodyElement): element is KnownMsgBodyElement {
  return KNOWN_MSG_TYPES.has(element.MsgType);
}

/** What every element has: its type. The first step of {@link MsgBodyElementSchema}. */
export const ElementTypeSchema = z.looseObject({
  /** The element type. */
  MsgType: z.string(),
});

/**
 * One element of `MsgBody`. Reads `MsgType` first and validates a known type against its own schema (so
 * a broken known element is an error with a precise path, which `parseWebhookEvent` lists in
 * `event.issues`); any other type passes through as an {@link UnknownMsgBodyElement}.
 */
export const MsgBodyElementSchema = z.pipe(
  ElementTypeSchema,
  z.transform((value, ctx): MsgBodyElement => {
    if (!KNOWN_MSG_TYPES.has(value.MsgType)) return value as UnknownMsgBodyElement;
    // A parse of its own, whose issues are worded here: in zod's words, as the rest of an event's.
    const result = KnownMsgBodyElementSchema.safeParse(value, ZOD_WORDS);
    if (result.success) return result.data;
    for (const issue of result.error.issues) {
      ctx.issues.push({ code: 'custom', message: issue.message, path: issue.path, input: value });
    }
    return z.NEVER;
  }),
);
