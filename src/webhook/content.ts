/**
 * Helpers that read what a message says and carries, so receivers do not each re-learn Tencent's element
 * layout (image variants by number, `Url` vs `URL` vs `VideoUrl`, 0 meaning "unknown size").
 *
 * Media URLs carry temporary signed query parameters (spec "Events"): use them as received, soon, and
 * do not store them; download the file if you need to keep it.
 */
import type { ImageElem, ImageInfo, MsgBodyElement } from './element-schemas.js';
import { isMessageEvent, type TIMMessageCallback, type WebhookEvent } from './schemas.js';

/** Which rendition of an image to prefer. Tencent's `ImageInfoArray` `Type` 1, 2 and 3. */
export type ImageVariant = 'original' | 'large' | 'thumbnail';

/** The image format named by `ImageFormat` (1 JPG, 2 GIF, 3 PNG, 4 BMP, anything else "other"). */
export type ImageFormatName = 'jpg' | 'gif' | 'png' | 'bmp' | 'other';

/** One rendition of an image. Width and height are `undefined` when Tencent says 0 ("unknown"). */
export interface WebhookImageRendition {
  /** Which rendition: `original`, `large` or `thumbnail`. */
  variant: ImageVariant | undefined;
  /** Where to download it (signed, temporary: fetch it at once). */
  url: string | undefined;
  /** Its size in bytes. */
  size: number | undefined;
  /** Its width in pixels. */
  width: number | undefined;
  /** Its height in pixels. */
  height: number | undefined;
}

interface WebhookMediaCommon {
  /** The signed download URL, used as received; `undefined` when an old SDK sent none. */
  url: string | undefined;
  /** Bytes, when known. */
  size: number | undefined;
  /** Tencent's id of the file. */
  uuid: string | undefined;
  /** Position of the element in `MsgBody`. */
  elementIndex: number;
}

/** An image, in the chosen rendition; `renditions` lists every one that arrived. */
export interface WebhookImageMedia extends WebhookMediaCommon, Omit<WebhookImageRendition, 'url' | 'size'> {
  /** The kind of media. */
  kind: 'image';
  /** Its format as sent. */
  format: ImageFormatName | undefined;
  /** Every rendition that arrived. */
  renditions: WebhookImageRendition[];
}

/** A video, with its thumbnail when one arrived. */
export interface WebhookVideoMedia extends WebhookMediaCommon {
  /** The kind of media. */
  kind: 'video';
  /** Its duration in seconds. */
  durationSeconds: number | undefined;
  /** The container format as sent, e.g. `mp4`. */
  format: string | undefined;
  /** Its thumbnail, when one arrived. */
  thumbnail:
    | {
        /** Where to download it (signed, temporary: fetch it at once). */
        url: string | undefined;
        /** Its size in bytes. */
        size: number | undefined;
        /** Its width in pixels. */
        width: number | undefined;
        /** Its height in pixels. */
        height: number | undefined;
        /** Its format as sent. */
        format: string | undefined;
      }
    | undefined;
}

/** A voice message (`TIMSoundElem`). */
export interface WebhookAudioMedia extends WebhookMediaCommon {
  /** The kind of media. */
  kind: 'audio';
  /** Its duration in seconds. */
  durationSeconds: number | undefined;
}

/** A file (`TIMFileElem`). */
export interface WebhookFileMedia extends WebhookMediaCommon {
  /** The kind of media. */
  kind: 'file';
  /** The file's name. */
  fileName: string | undefined;
}

/** A media item of a message, discriminated by `kind`. */
export type WebhookMedia = WebhookImageMedia | WebhookVideoMedia | WebhookAudioMedia | WebhookFileMedia;

/** Options of {@link getMessageMedia}. */
export interface GetMessageMediaOptions {
  /**
   * The image rendition to return. When it is missing the nearest one is used (original and large stand
   * in for each other before the thumbnail; a thumbnail request falls back to large, then original).
   * @default 'original'
   */
  imageVariant?: ImageVariant | undefined;
}

const VARIANT_BY_TYPE: Record<number, ImageVariant> = { 1: 'original', 2: 'large', 3: 'thumbnail' };
const FALLBACK_ORDER: Record<ImageVariant, ImageVariant[]> = {
  original: ['original', 'large', 'thumbnail'],
  large: ['large', 'original', 'thumbnail'],
  thumbnail: ['thumbnail', 'large', 'original'],
};
const FORMAT_BY_CODE: Record<number, ImageFormatName> = { 1: 'jpg', 2: 'gif', 3: 'png', 4: 'bmp' };

// A callback has MsgBody at the top; a message event has it under `data`; other events have none.
function messageBody(source: WebhookEvent | TIMMessageCallback): MsgBodyElement[] {
  if (Array.isArray(source.MsgBody)) return (source as TIMMessageCallback).MsgBody;
  const event = source as WebhookEvent;
  return isMessageEvent(event) ? event.data.MsgBody : [];
}

/** Tencent uses 0 for "not known" in widths and heights. */
const known = (value: number | undefined): number | undefined => (value ? value : undefined);

/**
 * The text of a message: its `TIMTextElem` elements joined in order (a body of text, face, text gives
 * "hello" + "world" = "helloworld", as Tencent's clients show it without the face). `''` when the message
 * has no text (an image, a voice message ...).
 */
export function getMessageText(source: WebhookEvent | TIMMessageCallback): string {
  let text = '';
  for (const element of messageBody(source)) {
    if (element.MsgType === 'TIMTextElem') text += element.MsgContent.Text;
  }
  return text;
}

function rendition(info: ImageInfo): WebhookImageRendition {
  return {
    variant: VARIANT_BY_TYPE[info.Type],
    url: info.URL,
    size: info.Size,
    width: known(info.Width),
    height: known(info.Height),
  };
}

function pickRendition(renditions: WebhookImageRendition[], wanted: ImageVariant) {
  // A rendition with a URL beats one without: the point is usually to fetch it.
  const withUrl = renditions.filter((candidate) => candidate.url !== undefined);
  for (const pool of [withUrl, renditions]) {
    for (const variant of FALLBACK_ORDER[wanted]) {
      const found = pool.find((candidate) => candidate.variant === variant);
      if (found) return found;
    }
    if (pool[0]) return pool[0];
  }
  return undefined;
}

function imageMedia(element: ImageElem, elementIndex: number, wanted: ImageVariant): WebhookImageMedia {
  const content = element.MsgContent;
  const renditions = content.ImageInfoArray.map(rendition);
  const chosen = pickRendition(renditions, wanted);
  const format =
    content.ImageFormat === undefined ? undefined : (FORMAT_BY_CODE[content.ImageFormat] ?? 'other');
  return {
    kind: 'image',
    url: chosen?.url,
    size: chosen?.size,
    uuid: content.UUID,
    elementIndex,
    variant: chosen?.variant,
    width: chosen?.width,
    height: chosen?.height,
    format,
    renditions,
  };
}

function toMedia(
  element: MsgBodyElement,
  elementIndex: number,
  wanted: ImageVariant,
): WebhookMedia | undefined {
  switch (element.MsgType) {
    case 'TIMImageElem':
      return imageMedia(element, elementIndex, wanted);
    case 'TIMSoundElem': {
      const { Url, Size, UUID, Second } = element.MsgContent;
      return { kind: 'audio', url: Url, size: Size, uuid: UUID, elementIndex, durationSeconds: Second };
    }
    case 'TIMFileElem': {
      const { Url, FileSize, UUID, FileName } = element.MsgContent;
      return { kind: 'file', url: Url, size: FileSize, uuid: UUID, elementIndex, fileName: FileName };
    }
    case 'TIMVideoFileElem': {
      const c = element.MsgContent;
      const hasThumb = c.ThumbUrl !== undefined || c.ThumbUUID !== undefined || c.ThumbSize !== undefined;
      return {
        kind: 'video',
        url: c.VideoUrl,
        size: c.VideoSize,
        uuid: c.VideoUUID,
        elementIndex,
        durationSeconds: c.VideoSecond,
        format: c.VideoFormat,
        thumbnail: hasThumb
          ? {
              url: c.ThumbUrl,
              size: c.ThumbSize,
              width: known(c.ThumbWidth),
              height: known(c.ThumbHeight),
              format: c.ThumbFormat,
            }
          : undefined,
      };
    }
    default:
      return undefined;
  }
}

/**
 * The media of a message (images, videos, voice messages, files) in `MsgBody` order, each as
 * `{ kind, url, size, uuid, ... }`. Images come in the rendition you ask for.
 *
 * URLs are temporary and signed: fetch them as received and do not store them. `url` is `undefined` for
 * elements from old Tencent SDKs (2.x/3.x), which send no download URL.
 *
 * @example
 * ```ts
 * for (const media of getMessageMedia(event, { imageVariant: 'large' })) {
 *   if (media.kind === 'image' && media.url) await download(media.url);
 * }
 * ```
 */
export function getMessageMedia(
  source: WebhookEvent | TIMMessageCallback,
  options: GetMessageMediaOptions = {},
): WebhookMedia[] {
  const wanted = options.imageVariant ?? 'original';
  const media: WebhookMedia[] = [];
  messageBody(source).forEach((element, index) => {
    const item = toMedia(element, index, wanted);
    if (item) media.push(item);
  });
  return media;
}
