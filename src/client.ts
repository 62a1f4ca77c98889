import { type AccountClientParts, ClientContext } from './core/context.js';
import type { OAClientEventName, OAClientListener } from './core/events.js';
import type { OAClientOptions, RequestOptions } from './core/options.js';
import { call } from './core/pipeline.js';
import { endpoints, uploads } from './endpoints.js';
import type * as req from './schemas/requests.js';
import type * as res from './schemas/responses.js';
import { clientTelemetry } from './telemetry/runtime.js';
import type { FileInput, UploadOptions } from './uploads/types.js';
import {
  type SendFileOptions,
  type SendVideoOptions,
  sendAudioFile,
  sendImageFile,
  sendVideoFile,
} from './video/send-file.js';
import { type BroadcastOptions, VideoReadiness, type WaitForVideoOptions } from './video/video-ready.js';

export type { SendFileOptions, SendVideoOptions } from './video/send-file.js';

/**
 * One account's client for `createAccounts`: its context (limiter, token manager, events ...) is made
 * when it is first needed, from what the accounts share, so that a client never used costs little.
 */
export function accountClient(parts: AccountClientParts): OAClient {
  return new OAClient(parts.shared.options, parts);
}

/**
 * A client's context, its tracing made here: the telemetry is the client's part, handed to the
 * context, whose pipeline knows none. An account's client names its account on its spans (the
 * shared options name none).
 */
function clientContext(options: OAClientOptions, account?: AccountClientParts): ClientContext {
  const traced = account ? { ...options, account: account.account } : options;
  return new ClientContext(
    options,
    (events, baseUrl, limits, logger) => clientTelemetry(traced, events, baseUrl, limits, logger)?.hooks,
    account,
  );
}

declare global {
  interface SymbolConstructor {
    /**
     * `Symbol.asyncDispose` (ES2024's `esnext.disposable`), declared for projects whose `lib` predates it
     * (a Worker's `ES2022`), as `@types/node` declares it, so that {@link OAClient}'s types compile there.
     */
    readonly asyncDispose: unique symbol;
  }
}

/**
 * The client of the OA Public Messaging API. Tokens are handled for you: the first call obtains a
 * pair, a pair close to expiry is refreshed before use, and a 401 triggers one shared refresh and one
 * replay. Every method validates its input before anything is sent.
 *
 * @example
 * const client = new OAClient({ baseUrl, apiKey, apiSecret });
 * await client.sendText({ user_id: 'u-1', msg: 'Hello' });
 */
export class OAClient {
  #context: ClientContext | undefined;
  #videoReadiness: VideoReadiness | undefined;
  /** An account's client whose context is not made yet: what it is made from. */
  #account: AccountClientParts | undefined;
  /** Closed before its context was made: the context is made closed. */
  #closedUnused = false;

  constructor(options?: OAClientOptions);
  /**
   * @internal An account's client, made by {@link accountClient} from the accounts' parts: not in the
   * package's types (`stripInternal`).
   */
  constructor(options: OAClientOptions, account: AccountClientParts);
  constructor(options: OAClientOptions = {}, account?: AccountClientParts) {
    if (account) {
      this.#account = account;
      return;
    }
    this.#context = clientContext(options);
    this.#videoReadiness = new VideoReadiness(this.#context, options);
  }

  get #ctx(): ClientContext {
    return this.#context ?? this.#made();
  }

  get #videos(): VideoReadiness {
    if (!this.#videoReadiness) this.#made();
    return this.#videoReadiness as VideoReadiness;
  }

  /** An account's client's context, made on its first need. */
  #made(): ClientContext {
    const account = this.#account as AccountClientParts;
    const ctx = clientContext(account.shared.options, account);
    this.#context = ctx;
    this.#videoReadiness = new VideoReadiness(ctx, account.shared.options);
    this.#account = undefined;
    if (this.#closedUnused) ctx.calls.closeAll();
    return ctx;
  }

  /**
   * Listens to what the client does: `request`, `response`, `retry` (with its reason),
   * `rateLimitWait`, `tokenRefresh` and `videoProbe`. Events never carry a secret; a listener that
   * throws is reported to the logger and does not affect the call.
   * @example client.on('retry', (e) => metrics.increment(`oa.retry.${e.reason}`))
   */
  on<E extends OAClientEventName>(event: E, listener: OAClientListener<E>): this {
    this.#ctx.events.on(event, listener);
    return this;
  }

  /** Removes a listener added with {@link OAClient.on}. */
  off<E extends OAClientEventName>(event: E, listener: OAClientListener<E>): this {
    this.#ctx.events.off(event, listener);
    return this;
  }

  /** `POST /api/v2/public/auth/token`: a new token pair from the api key and secret. The client keeps it. */
  generateToken(options?: RequestOptions): Promise<res.TokenPair> {
    return this.#ctx.generateToken(options);
  }

  /**
   * `POST /api/v2/public/auth/refresh-token`: a new token pair from a refresh token (by default the one
   * the client holds). The client keeps the new pair.
   */
  refreshToken(refresh_token?: string, options?: RequestOptions): Promise<res.TokenPair> {
    return this.#ctx.refreshToken(refresh_token, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-greeting`: sends the OA's configured greeting to one user. */
  sendGreeting(params: req.SendGreetingParams, options?: RequestOptions): Promise<res.Greeting> {
    return call(this.#ctx, endpoints.sendGreeting, params, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-image-link`: an image to one user; with `link`, tapping opens it. */
  sendImage(params: req.SendImageParams, options?: RequestOptions): Promise<res.SendResult> {
    return call(this.#ctx, endpoints.sendImage, params, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-message`: a text to one user; `desc` shows on the push notification. */
  sendText(params: req.SendTextParams, options?: RequestOptions): Promise<res.SendResult> {
    return call(this.#ctx, endpoints.sendText, params, options);
  }

  /**
   * `POST /api/v2/public/message/broadcast-message`: up to 5 items to all users, selected users or one user.
   * A video item whose ticket is not known to be ready is first confirmed through the probe user
   * (`videoProbeUserId`), or the call fails before anything is sent; `waitForTranscode: false` skips it.
   * @example client.broadcast({ target: 'all', items: [items.text('Hello')] })
   */
  broadcast(params: req.BroadcastParams, options?: BroadcastOptions): Promise<res.BroadcastRecord> {
    return this.#videos.broadcast(endpoints.broadcast, params, options);
  }

  /**
   * `POST /api/v2/public/message/broadcast-group-message`: up to 5 items to every member of a group.
   * Video items wait as in {@link OAClient.broadcast}.
   */
  broadcastToGroup(
    params: req.BroadcastToGroupParams,
    options?: BroadcastOptions,
  ): Promise<res.BroadcastRecord> {
    return this.#videos.broadcast(endpoints.broadcastToGroup, params, options);
  }

  /**
   * `POST /api/v2/public/message/broadcast-member-session`: up to 5 items to a member-group broadcast
   * session. Video items wait as in {@link OAClient.broadcast}.
   */
  broadcastToMemberSession(
    params: req.BroadcastToMemberSessionParams,
    options?: BroadcastOptions,
  ): Promise<res.BroadcastRecord> {
    return this.#videos.broadcast(endpoints.broadcastToMemberSession, params, options);
  }

  /**
   * `POST /api/v2/public/webhook/broadcast-video`: a video (`ticket_id` of `uploadVideo`) to one user.
   * While the ticket is still converting, it waits and tries again (see `waitForTranscode`). Once it
   * succeeds the ticket is known ready: broadcasts of it need no probe (see `videoProbeUserId`).
   */
  sendVideo(params: req.SendVideoParams, options?: SendVideoOptions): Promise<res.SendResult> {
    return this.#videos.sendVideo(params, options);
  }

  /**
   * Waits until a video ticket is known ready, as the broadcasts do before sending one: at once if a
   * `sendVideo` of it succeeded (here, or in a process sharing the coordination); else by sending the
   * video to the probe user (`probeUserId`, or the client's `videoProbeUserId`), waiting while it
   * converts. Without a probe user, an unknown ticket fails with `OAVideoNotConfirmedError`.
   * @example await client.waitForVideo(ticket_id, { probeUserId: 'my-test-account' });
   */
  waitForVideo(ticket_id: string, options?: WaitForVideoOptions): Promise<void> {
    return this.#videos.waitFor(ticket_id, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-audio`: an uploaded audio file to one user. */
  sendAudio(params: req.SendAudioParams, options?: RequestOptions): Promise<res.SendResult> {
    return call(this.#ctx, endpoints.sendAudio, params, options);
  }

  /**
   * `POST /api/v2/public/upload/image`: stores a JPG, PNG or WEBP image of at most 5 MB and returns its
   * public `url`, for `sendImage` and image items. The format (from the bytes) and the size are checked
   * before anything is sent.
   * @example const { url } = await client.uploadImage('./banner.png');
   */
  uploadImage(file: FileInput, options?: UploadOptions): Promise<res.UploadImageResult> {
    return this.#ctx.upload('image', uploads.image, file, options);
  }

  /**
   * `POST /api/v2/public/upload/video`: uploads an MP4, AVI, MKV, MOV, WEBM, OGG, 3GP or 3G2 video of at
   * most 100 MB, streamed from disk, and returns the `ticket_id` of its transcode job.
   */
  uploadVideo(file: FileInput, options?: UploadOptions): Promise<res.UploadVideoResult> {
    return this.#ctx.upload('video', uploads.video, file, options);
  }

  /**
   * `POST /api/v2/public/upload/audio`: uploads an MP3, WAV, OGG, M4A or AAC file of at most 100 MB and
   * returns the four values `sendAudio` and `items.audio` take.
   */
  uploadAudio(file: FileInput, options?: UploadOptions): Promise<res.UploadAudioResult> {
    return this.#ctx.upload('audio', uploads.audio, file, options);
  }

  /**
   * Uploads an image and sends it to one user: `uploadImage` then `sendImage`. Every argument is checked
   * before the upload.
   */
  sendImageFile(
    user_id: string,
    file: FileInput,
    options?: SendFileOptions<res.UploadImageResult> & { link?: string | undefined },
  ): Promise<res.SendResult> {
    return sendImageFile(this, user_id, file, options);
  }

  /**
   * Uploads an audio file and sends it to one user: `uploadAudio` then `sendAudio`. Every argument is
   * checked before the upload.
   */
  sendAudioFile(
    user_id: string,
    file: FileInput,
    options?: SendFileOptions<res.UploadAudioResult>,
  ): Promise<res.SendResult> {
    return sendAudioFile(this, user_id, file, options);
  }

  /**
   * Uploads a video, waits for its transcode and sends it to one user: `uploadVideo` then `sendVideo`.
   * `timeoutMs` applies to each of the two calls; `waitForTranscode` bounds the wait. Every argument is
   * checked before the upload.
   */
  sendVideoFile(
    user_id: string,
    file: FileInput,
    options?: SendFileOptions<res.UploadVideoResult> & Pick<SendVideoOptions, 'waitForTranscode'>,
  ): Promise<res.SendResult> {
    return sendVideoFile(this, user_id, file, options);
  }

  /**
   * Releases the client's sockets at once (a dispatcher you passed in stays yours). Calls made after
   * `close()` reject. A script that simply ends needs no `close()`.
   */
  close(): Promise<void> {
    // Never used: nothing to release, and a context made later is made closed.
    if (!this.#context) {
      this.#closedUnused = true;
      return Promise.resolve();
    }
    // Every wait ends now (queue, token, backoff, transcode), and requests in flight are aborted: a
    // call that never sent its request says so (`deliveryUnknown: false`).
    return this.#ctx.close();
  }

  /**
   * `close()`, for `await using client = new OAClient()`: the client is closed when the block ends,
   * however it ends.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
