/** What a bot handler receives: the event, the sender, the session, and replies that need no `user_id`. */
import { createHash, randomUUID } from 'node:crypto';
import type { OAClient } from '../client.js';
import { OAValidationError } from '../errors.js';
import type { OutboxAddOptions, OutboxMethod, OutboxParams } from '../queue/methods.js';
import type { FileInput } from '../uploads/types.js';
import { getMessageMedia, getMessageText, type WebhookMedia } from '../webhook/content.js';
import { dedupeKeyOf } from '../webhook/dedupe.js';
import { isMessageEvent, type WebhookEvent } from '../webhook/schemas.js';

/** What a bot needs of an outbox (`createOutbox` of `oa-messaging/queue`): adding a keyed send. */
export interface BotOutbox {
  /** As `outbox.add`: the send is stored under `key` once, and delivered at most once. */
  add<M extends OutboxMethod>(
    method: M,
    params: OutboxParams<M>,
    options: OutboxAddOptions,
  ): Promise<unknown>;
}

/** Options of `ctx.reply`. */
export interface BotReplyOptions {
  /** The short text of the push notification (at most 170 characters). */
  desc?: string | undefined;
}

/** Options of `ctx.replyWithImage`. */
export interface BotImageReplyOptions {
  /** The page that opens when the image is tapped. */
  link?: string | undefined;
}

const HTTP_URL = /^https?:\/\//i;

/** The state a context and its narrowed views share (a view is made per matching handler). */
interface ContextState<S> {
  session: S;
  replies: number;
  /** Whether a handler read or assigned `ctx.session`: a session nobody touched is not saved. */
  touched: boolean;
  /** Called once, at the first read or assignment, before the handler sees or replaces the session. */
  onFirstTouch: ((session: S) => void) | undefined;
  /** Runs before each reply (and its upload): rejects when the event may no longer be acted on. */
  beforeSend: (() => Promise<void>) | undefined;
}

const states = new WeakMap<object, ContextState<unknown>>();

/**
 * How the bot watches a context: `onFirstTouch` runs at the first read or assignment of `ctx.session`
 * (with the session as loaded), `beforeSend` before each reply; the result tells whether the session
 * was touched.
 */
export function watchContext<S>(
  ctx: BotContext<S>,
  hooks: { onFirstTouch: (session: S) => void; beforeSend?: (() => Promise<void>) | undefined },
): () => boolean {
  const state = states.get(ctx) as ContextState<S> | undefined;
  if (!state) return () => true;
  state.onFirstTouch = hooks.onFirstTouch;
  state.beforeSend = hooks.beforeSend;
  return () => state.touched;
}

/**
 * One inbound event as a bot handler sees it. Handlers of `bot.on(filter)` get it narrowed to what the
 * filter matched (see {@link BotFilterContext}).
 */
export class BotContext<S = Record<string, unknown>> {
  /** The event as the webhook (or the inbox) handed it over; `ctx.event.raw` keeps the body. */
  readonly event: WebhookEvent;
  /** The user who sent it, the one every reply goes to; `undefined` for an event with no sender. */
  readonly from: string | undefined;
  /** The message's text (its text elements joined); `''` when it has none. */
  readonly text: string;
  /** The message's images, videos, voice messages and files, in order. */
  readonly media: readonly WebhookMedia[];
  /**
   * What `bot.hears` matched: the `RegExp`'s match (groups at `ctx.match[1]` ...), or the string heard;
   * `undefined` elsewhere.
   */
  match: RegExpMatchArray | string | undefined;
  /** The client the replies are sent with; use it for anything the reply methods do not cover. */
  readonly client: OAClient;
  readonly #outbox: BotOutbox | undefined;
  readonly #state: ContextState<S>;
  readonly #replyKey: string;
  readonly #account: string | undefined;

  /**
   * Made by the bot for each event; a handler never needs to make one. `account`: the account that
   * received the event, for a bot of many accounts with an outbox (its replies are added under it).
   */
  constructor(
    event: WebhookEvent,
    client: OAClient,
    outbox: BotOutbox | undefined,
    session: S,
    account?: string | undefined,
  ) {
    this.event = event;
    const message = isMessageEvent(event) ? event : undefined;
    this.from = message?.data.From_Account || undefined;
    this.text = message ? getMessageText(message) : '';
    this.media = message ? getMessageMedia(message) : [];
    this.match = undefined;
    this.client = client;
    this.#outbox = outbox;
    this.#state = { session, replies: 0, touched: false, onFirstTouch: undefined, beforeSend: undefined };
    states.set(this, this.#state as ContextState<unknown>);
    this.#replyKey = replyKeyOf(event);
    this.#account = account;
  }

  /** This user's session: loaded before the first handler ran, saved after the last one. */
  get session(): S {
    this.#touch();
    return this.#state.session;
  }
  /** Replaces the session; `null` or `undefined` deletes it when the event has been handled. */
  set session(value: S) {
    this.#touch();
    this.#state.session = value;
  }

  #touch(): void {
    const state = this.#state;
    if (state.touched) return;
    state.touched = true;
    state.onFirstTouch?.(state.session);
  }

  /**
   * Sends a text to the sender (`sendText`). With an outbox, it is added under the key of the event and
   * the reply's position, so a handler that runs again (a retry, a crash) never sends it twice; in a
   * bot of many accounts, under the receiving account, after this user's earlier replies. Every
   * reply run from an inbox with `order: 'sender'` first checks that this worker still holds the sender:
   * else it rejects with `OALockLostError`, nothing sent (the worker stalled and another took over).
   */
  reply(msg: string, options: BotReplyOptions = {}): Promise<void> {
    return this.#send('sendText', (user_id) => ({ user_id, msg, ...definedDesc(options.desc) }));
  }

  /**
   * Sends an image to the sender: an `http(s)` URL as it is (`sendImage`), anything else (a path, bytes,
   * a `Blob`, a stream) uploaded first. `undefined` (a received image whose URL an old client did not
   * send) is an `OAValidationError`, nothing sent.
   */
  async replyWithImage(image: FileInput | undefined, options: BotImageReplyOptions = {}): Promise<void> {
    const link = options.link === undefined ? {} : { link: options.link };
    if (image === undefined) {
      throw new OAValidationError('replyWithImage needs an image: a URL, a path, bytes or a Blob', [
        { path: ['image'], message: 'undefined (a received image without a URL?)' },
      ]);
    }
    if (typeof image === 'string' && HTTP_URL.test(image)) {
      return this.#send('sendImage', (user_id) => ({ user_id, image_url: image, ...link }));
    }
    const user_id = this.#recipient();
    await this.#state.beforeSend?.();
    if (!this.#outbox) {
      await this.client.sendImageFile(user_id, image, link);
      return;
    }
    const { url } = await this.client.uploadImage(image);
    return this.#send('sendImage', () => ({ user_id, image_url: url, ...link }));
  }

  /** Uploads a video and sends it to the sender once it is transcoded (`sendVideo` waits for it). */
  async replyWithVideo(file: FileInput): Promise<void> {
    const user_id = this.#recipient();
    await this.#state.beforeSend?.();
    if (!this.#outbox) {
      await this.client.sendVideoFile(user_id, file);
      return;
    }
    const { ticket_id } = await this.client.uploadVideo(file);
    return this.#send('sendVideo', () => ({ user_id, ticket_id }));
  }

  /** Uploads an audio file and sends it to the sender (`sendAudio`). */
  async replyWithAudio(file: FileInput): Promise<void> {
    const user_id = this.#recipient();
    await this.#state.beforeSend?.();
    if (!this.#outbox) {
      await this.client.sendAudioFile(user_id, file);
      return;
    }
    const { audio_url, audio_uuid, audio_size, audio_duration } = await this.client.uploadAudio(file);
    return this.#send('sendAudio', () => ({ user_id, audio_url, audio_uuid, audio_size, audio_duration }));
  }

  /** Sends the OA's greeting to the sender (`sendGreeting`). */
  replyWithGreeting(): Promise<void> {
    return this.#send('sendGreeting', (user_id) => ({ user_id }));
  }

  #recipient(): string {
    if (this.from === undefined) {
      throw new OAValidationError('this event has no sender to reply to (From_Account)', [
        { path: ['event', 'data', 'From_Account'], message: 'missing' },
      ]);
    }
    return this.from;
  }

  async #send<M extends OutboxMethod>(
    method: M,
    params: (user_id: string) => OutboxParams<M>,
  ): Promise<void> {
    const user_id = this.#recipient();
    // The position counts every reply started, in order, so a handler that runs again makes the same keys.
    const position = ++this.#state.replies;
    // Checked last before the send: an upload before it may have taken long.
    await this.#state.beforeSend?.();
    const outbox = this.#outbox;
    if (outbox) {
      const key = `${this.#replyKey}:${position}`;
      // Of many accounts: through the receiving account's lane, after this user's earlier replies.
      const account = this.#account;
      await outbox.add(
        method,
        params(user_id),
        account === undefined ? { key } : { key, account, orderGroup: user_id },
      );
      return;
    }
    const send = this.client[method] as (p: OutboxParams<M>) => Promise<unknown>;
    await send.call(this.client, params(user_id));
  }
}

/** `{ desc }` when given: the send's schema refuses nothing for an absent `desc`. */
const definedDesc = (desc: string | undefined) => (desc === undefined ? {} : { desc });

/**
 * The outbox key of an event's replies, made from the event's whole dedupe identity (the account, the
 * callback, the conversation and the message id: what tells a redelivery from another event), so that
 * two events the webhook's dedupe tells apart never share a reply. `reply:<MsgKey>.<hash>` (the MsgKey
 * readable in `oa outbox status`) when the event has a plain MsgKey, else `reply:<hash>`; an event with
 * no identity gets a key of its own.
 */
function replyKeyOf(event: WebhookEvent): string {
  const identity = dedupeKeyOf(event);
  if (identity === undefined) return `reply:${randomUUID()}`;
  const hash = createHash('sha256').update(identity).digest('hex');
  const msgKey = isMessageEvent(event) ? event.data.MsgKey : undefined;
  if (msgKey && /^[\w.-]{1,200}$/.test(msgKey)) return `reply:${msgKey}.${hash.slice(0, 16)}`;
  return `reply:${hash.slice(0, 40)}`;
}
