/** The filters of `bot.on`, what each matches, and the context a handler of each gets. */
import type {
  WebhookAudioMedia,
  WebhookFileMedia,
  WebhookImageMedia,
  WebhookMedia,
  WebhookVideoMedia,
} from '../webhook/content.js';
import type {
  CustomElem,
  FaceElem,
  LocationElem,
  MsgBodyElement,
  TextElem,
} from '../webhook/element-schemas.js';
import { isMessageEvent, type WebhookEvent, type WebhookMessageEvent } from '../webhook/schemas.js';
import type { BotContext } from './context.js';

/** What `bot.on` can match: a message, or a message holding an element of one kind. */
export type BotFilter =
  | 'message'
  | 'text'
  | 'image'
  | 'video'
  | 'sound'
  | 'file'
  | 'location'
  | 'face'
  | 'custom';

/** The `MsgType` each element filter matches. */
const MSG_TYPES = {
  text: 'TIMTextElem',
  image: 'TIMImageElem',
  video: 'TIMVideoFileElem',
  sound: 'TIMSoundElem',
  file: 'TIMFileElem',
  location: 'TIMLocationElem',
  face: 'TIMFaceElem',
  custom: 'TIMCustomElem',
} as const satisfies Record<Exclude<BotFilter, 'message'>, string>;

/** The media kind of each filter that has media. */
const MEDIA_KINDS: Partial<Record<BotFilter, WebhookMedia['kind']>> = {
  image: 'image',
  video: 'video',
  sound: 'audio',
  file: 'file',
};

/** Whether `name` is a {@link BotFilter}. */
export function isBotFilter(name: unknown): name is BotFilter {
  return name === 'message' || (typeof name === 'string' && Object.hasOwn(MSG_TYPES, name));
}

/** Whether `event` is a message (with a sender) holding what `filter` asks for. */
export function matches(filter: BotFilter, event: WebhookEvent): event is WebhookMessageEvent {
  if (!isMessageEvent(event) || !event.data.From_Account) return false;
  if (filter === 'message') return true;
  const type = MSG_TYPES[filter];
  return event.data.MsgBody.some((element) => element.MsgType === type);
}

/** The elements of `filter`'s type in `event`, in order. */
export function elementsOf(filter: BotFilter, event: WebhookMessageEvent): MsgBodyElement[] {
  if (filter === 'message') return event.data.MsgBody;
  const type = MSG_TYPES[filter];
  return event.data.MsgBody.filter((element) => element.MsgType === type);
}

/** The media of `filter`'s kind among `media` (all of them for filters without media). */
export function mediaOf(filter: BotFilter, media: readonly WebhookMedia[]): readonly WebhookMedia[] {
  const kind = MEDIA_KINDS[filter];
  return kind ? media.filter((item) => item.kind === kind) : media;
}

/** What a filter's handlers see of the matched content. */
export interface BotFilterView<E, M> {
  /** The matched elements of `MsgBody`, in order. */
  elements: E;
  /** The matched media, in order. */
  media: M;
}

/** Per filter: the types of `ctx.elements` and `ctx.media` its handlers see (see {@link BotFilterContext}). */
export interface BotFilterViews {
  /** Any message: every element, every media item. */
  message: BotFilterView<readonly MsgBodyElement[], readonly WebhookMedia[]>;
  /** Text elements. */
  text: BotFilterView<readonly [TextElem, ...TextElem[]], readonly WebhookMedia[]>;
  /** Image elements; `media` holds the images. */
  image: BotFilterView<
    readonly [
      Extract<MsgBodyElement, { MsgType: 'TIMImageElem' }>,
      ...Extract<MsgBodyElement, { MsgType: 'TIMImageElem' }>[],
    ],
    readonly [WebhookImageMedia, ...WebhookImageMedia[]]
  >;
  /** Video elements; `media` holds the videos. */
  video: BotFilterView<
    readonly [
      Extract<MsgBodyElement, { MsgType: 'TIMVideoFileElem' }>,
      ...Extract<MsgBodyElement, { MsgType: 'TIMVideoFileElem' }>[],
    ],
    readonly [WebhookVideoMedia, ...WebhookVideoMedia[]]
  >;
  /** Voice elements; `media` holds the voice messages. */
  sound: BotFilterView<
    readonly [
      Extract<MsgBodyElement, { MsgType: 'TIMSoundElem' }>,
      ...Extract<MsgBodyElement, { MsgType: 'TIMSoundElem' }>[],
    ],
    readonly [WebhookAudioMedia, ...WebhookAudioMedia[]]
  >;
  /** File elements; `media` holds the files. */
  file: BotFilterView<
    readonly [
      Extract<MsgBodyElement, { MsgType: 'TIMFileElem' }>,
      ...Extract<MsgBodyElement, { MsgType: 'TIMFileElem' }>[],
    ],
    readonly [WebhookFileMedia, ...WebhookFileMedia[]]
  >;
  /** Location elements. */
  location: BotFilterView<readonly [LocationElem, ...LocationElem[]], readonly WebhookMedia[]>;
  /** Emoji elements. */
  face: BotFilterView<readonly [FaceElem, ...FaceElem[]], readonly WebhookMedia[]>;
  /** Custom elements. */
  custom: BotFilterView<readonly [CustomElem, ...CustomElem[]], readonly WebhookMedia[]>;
}

/**
 * The context a `bot.on(filter)` handler gets: a message event with its sender, `elements` holding the
 * matched elements (at least one, typed by the filter), and for `image`, `video`, `sound` and `file`,
 * `media` holding only that kind (at least one).
 */
export type BotFilterContext<F extends BotFilter, S> = Omit<BotContext<S>, 'event' | 'from' | 'media'> & {
  /** The message event. */
  readonly event: WebhookMessageEvent;
  /** The user who sent it, the one every reply goes to. */
  readonly from: string;
  /** The matched elements of `MsgBody`, in order (every element for `message`). */
  readonly elements: BotFilterViews[F]['elements'];
  /** The matched media (every media item for filters without media), in order. */
  readonly media: BotFilterViews[F]['media'];
};
