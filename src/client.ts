import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { TokenManager } from './core/auth.js';
import { CallRegistry } from './core/call-control.js';
import { type DispatcherLike, defaultDispatcher } from './core/dispatcher.js';
import type { Endpoint } from './core/endpoint.js';
import { ClientEvents, type OAClientEventName, type OAClientListener } from './core/events.js';
import { RequestHeaders } from './core/headers.js';
import { loggerFor } from './core/logger.js';
import { type OAClientOptions, type ResolvedOptions, resolveOptions } from './core/options.js';
import { type Limiter, RateLimiter } from './core/rate-limit.js';
import { MemoryReadyVideos } from './core/ready-videos.js';
import {
  callEndpoint,
  callUpload,
  checkRequestOptions,
  type RequestContext,
  type RequestOptions,
  tokenExchange,
} from './core/request.js';
import { MemoryTokenStore } from './core/token-store.js';
import { untilTranscoded } from './core/transcode.js';
import { validate } from './core/validate.js';
import { type BroadcastOptions, VideoReadiness, type WaitForVideoOptions } from './core/video-ready.js';
import { endpoints, uploads } from './endpoints.js';
import { OAValidationError } from './errors.js';
import * as req from './schemas/requests.js';
import type * as res from './schemas/responses.js';
import {
  type SendFileOptions,
  type SendVideoOptions,
  sendAudioFile,
  sendImageFile,
  sendVideoFile,
} from './send-file.js';
import { prepareUpload } from './uploads/prepare.js';
import { discardInput } from './uploads/source.js';
import type { FileInput, UploadKind, UploadOptions } from './uploads/types.js';

export type { SendFileOptions, SendVideoOptions } from './send-file.js';

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
  readonly #options: ResolvedOptions;
  readonly #tokens: TokenManager;
  readonly #ctx: RequestContext;
  readonly #events: ClientEvents;
  readonly #limiter: Limiter | undefined;
  readonly #calls = new CallRegistry();
  readonly #videos: VideoReadiness;
  /** The caller's dispatcher, which stays theirs. */
  readonly #given: DispatcherLike | undefined;
  /** The client's own, made on first use and destroyed by `close()`. */
  #own: Dispatcher | undefined;

  constructor(options: OAClientOptions = {}) {
    this.#options = resolveOptions(options);
    const logger = loggerFor(options.logger, options.logLevel);
    this.#given = options.dispatcher;
    const { apiKey, apiSecret } = this.#options;
    this.#events = new ClientEvents(logger);
    // No limiter starts a timer before its first request, so constructing a client opens nothing.
    const { rateLimit } = this.#options;
    const { coordination } = options;
    this.#limiter = rateLimit
      ? (coordination?.createLimiter(apiKey, rateLimit) ?? new RateLimiter(rateLimit))
      : undefined;
    this.#tokens = new TokenManager({
      store: coordination?.tokenStore ?? options.tokenStore ?? new MemoryTokenStore(),
      ...(coordination
        ? { withRenewalLock: <T>(renew: () => Promise<T>) => coordination.withRenewalLock(apiKey, renew) }
        : {}),
      key: apiKey,
      // Straight to the transport: the call that needs the token is already in a retry loop.
      login: (slot) =>
        tokenExchange(this.#ctx, endpoints.generateToken, { api_key: apiKey, api_secret: apiSecret }, slot),
      refresh: (refresh_token, slot) =>
        tokenExchange(this.#ctx, endpoints.refreshToken, { refresh_token }, slot),
      refreshBeforeExpiryMs: this.#options.refreshBeforeExpiryMs,
      logger,
      onRenewed: (kind, reason) => this.#events.emit('tokenRefresh', { kind, reason }),
    });
    this.#ctx = {
      baseUrl: this.#options.baseUrl,
      // Created on first use, so that constructing a client opens nothing.
      dispatcher: (undici) => {
        if (this.#given) return this.#given;
        this.#own ??= defaultDispatcher(undici, this.#options.proxyFromEnv);
        return this.#own;
      },
      headers: new RequestHeaders(options.appInfo, options.defaultHeaders),
      timeoutMs: this.#options.timeoutMs,
      uploadTimeoutMs: this.#options.uploadTimeoutMs,
      maxRetries: this.#options.maxRetries,
      maxBusyWaitMs: this.#options.maxBusyWaitMs,
      limiter: this.#limiter,
      events: this.#events,
      logger,
      tokens: this.#tokens,
      calls: this.#calls,
      secrets: () => [apiSecret, ...this.#tokens.knownSecrets()],
    };
    this.#videos = new VideoReadiness({
      key: apiKey,
      probeUserId: options.videoProbeUserId,
      local: new MemoryReadyVideos(),
      shared: coordination?.readyVideos,
      sendVideo: (params, videoOptions) => this.sendVideo(params, videoOptions),
      events: this.#events,
      logger,
      calls: this.#calls,
    });
  }

  #call<R extends z.ZodType>(endpoint: Endpoint<z.ZodType, R>, params: unknown, options?: RequestOptions) {
    return callEndpoint(this.#ctx, endpoint, params, options);
  }

  async #upload<R extends z.ZodType>(
    kind: UploadKind,
    endpoint: Endpoint<z.ZodType, R>,
    file: FileInput,
    options: UploadOptions | undefined,
  ): Promise<z.output<R>> {
    let checked: UploadOptions;
    try {
      checked = checkRequestOptions(this.#ctx, endpoint, options, req.UploadOptionsSchema);
    } catch (error) {
      // Refused before it was read: a stream handed over is not left open.
      discardInput(file);
      throw error;
    }
    const prepared = await prepareUpload(kind, file, checked);
    try {
      return await callUpload(this.#ctx, endpoint, prepared, checked);
    } finally {
      prepared.discard();
    }
  }

  /**
   * Listens to what the client does: `request`, `response`, `retry` (with its reason),
   * `rateLimitWait`, `tokenRefresh` and `videoProbe`. Events never carry a secret; a listener that
   * throws is reported to the logger and does not affect the call.
   * @example client.on('retry', (e) => metrics.increment(`oa.retry.${e.reason}`))
   */
  on<E extends OAClientEventName>(event: E, listener: OAClientListener<E>): this {
    this.#events.on(event, listener);
    return this;
  }

  /** Removes a listener added with {@link OAClient.on}. */
  off<E extends OAClientEventName>(event: E, listener: OAClientListener<E>): this {
    this.#events.off(event, listener);
    return this;
  }

  /** `POST /api/v2/public/auth/token`: a new token pair from the api key and secret. The client keeps it. */
  async generateToken(options?: RequestOptions): Promise<res.TokenPair> {
    const { apiKey, apiSecret } = this.#options;
    const pair = await this.#call(
      endpoints.generateToken,
      { api_key: apiKey, api_secret: apiSecret },
      options,
    );
    await this.#tokens.save(pair);
    return pair;
  }

  /**
   * `POST /api/v2/public/auth/refresh-token`: a new token pair from a refresh token (by default the one
   * the client holds). The client keeps the new pair.
   */
  async refreshToken(refresh_token?: string, options?: RequestOptions): Promise<res.TokenPair> {
    const token = refresh_token ?? (await this.#tokens.currentRefreshToken());
    if (token === undefined) {
      throw new OAValidationError(
        'refreshToken: no refresh token held (none yet, or the API gave none); call generateToken()',
        [{ path: ['refresh_token'], message: 'Required' }],
      );
    }
    const pair = await this.#call(endpoints.refreshToken, { refresh_token: token }, options);
    await this.#tokens.save(pair);
    return pair;
  }

  /** `POST /api/v2/public/webhook/broadcast-greeting`: sends the OA's configured greeting to one user. */
  sendGreeting(params: req.SendGreetingParams, options?: RequestOptions): Promise<res.Greeting> {
    return this.#call(endpoints.sendGreeting, params, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-image-link`: an image to one user; with `link`, tapping opens it. */
  sendImage(params: req.SendImageParams, options?: RequestOptions): Promise<res.SendResult> {
    return this.#call(endpoints.sendImage, params, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-message`: a text to one user; `desc` shows on the push notification. */
  sendText(params: req.SendTextParams, options?: RequestOptions): Promise<res.SendResult> {
    return this.#call(endpoints.sendText, params, options);
  }

  /**
   * `POST /api/v2/public/message/broadcast-message`: up to 5 items to all users, selected users or one user.
   * A video item whose ticket is not known to be ready is first confirmed through the probe user
   * (`videoProbeUserId`), or the call fails before anything is sent; `waitForTranscode: false` skips it.
   * @example client.broadcast({ target: 'all', items: [items.text('Hello')] })
   */
  broadcast(params: req.BroadcastParams, options?: BroadcastOptions): Promise<res.BroadcastRecord> {
    const { broadcast } = endpoints;
    return this.#videos.whenReady(broadcast, params, options, (o) => this.#call(broadcast, params, o));
  }

  /**
   * `POST /api/v2/public/message/broadcast-group-message`: up to 5 items to every member of a group.
   * Video items wait as in {@link OAClient.broadcast}.
   */
  broadcastToGroup(
    params: req.BroadcastToGroupParams,
    options?: BroadcastOptions,
  ): Promise<res.BroadcastRecord> {
    const { broadcastToGroup: endpoint } = endpoints;
    return this.#videos.whenReady(endpoint, params, options, (o) => this.#call(endpoint, params, o));
  }

  /**
   * `POST /api/v2/public/message/broadcast-member-session`: up to 5 items to a member-group broadcast
   * session. Video items wait as in {@link OAClient.broadcast}.
   */
  broadcastToMemberSession(
    params: req.BroadcastToMemberSessionParams,
    options?: BroadcastOptions,
  ): Promise<res.BroadcastRecord> {
    const { broadcastToMemberSession: endpoint } = endpoints;
    return this.#videos.whenReady(endpoint, params, options, (o) => this.#call(endpoint, params, o));
  }

  /**
   * `POST /api/v2/public/webhook/broadcast-video`: a video (`ticket_id` of `uploadVideo`) to one user.
   * While the ticket is still converting, it waits and tries again (see `waitForTranscode`). Once it
   * succeeds the ticket is known ready: broadcasts of it need no probe (see `videoProbeUserId`).
   */
  async sendVideo(params: req.SendVideoParams, options?: SendVideoOptions): Promise<res.SendResult> {
    const checked = checkRequestOptions(this.#ctx, endpoints.sendVideo, options, req.SendVideoOptionsSchema);
    const { waitForTranscode, ...requestOptions } = checked;
    const valid = validate(req.SendVideoParamsSchema, params, 'sendVideo params');
    // Each try is a call of its own (its own deadline); the waits between them end on the caller's
    // signal and on close().
    const control = this.#calls.start(`POST ${endpoints.sendVideo.path}`, { signal: checked.signal });
    const result = await untilTranscoded(() => this.#call(endpoints.sendVideo, valid, requestOptions), {
      ticket_id: valid.ticket_id,
      wait: waitForTranscode,
      control,
      onWait: (waitMs, attempt, error) => {
        this.#ctx.logger.info?.(
          `oa-messaging: video ticket ${valid.ticket_id} is still converting; trying again in ${waitMs} ms`,
        );
        this.#events.emit('retry', {
          endpoint: 'sendVideo',
          path: endpoints.sendVideo.path,
          attempt,
          reason: 'video_converting',
          waitMs,
          error,
        });
      },
    }).finally(() => control.end());
    await this.#videos.markReady(valid.ticket_id);
    return result;
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
    return this.#call(endpoints.sendAudio, params, options);
  }

  /**
   * `POST /api/v2/public/upload/image`: stores a JPG, PNG or WEBP image of at most 5 MB and returns its
   * public `url`, for `sendImage` and image items. The format (from the bytes) and the size are checked
   * before anything is sent.
   * @example const { url } = await client.uploadImage('./banner.png');
   */
  uploadImage(file: FileInput, options?: UploadOptions): Promise<res.UploadImageResult> {
    return this.#upload('image', uploads.image, file, options);
  }

  /**
   * `POST /api/v2/public/upload/video`: uploads an MP4, AVI, MKV, MOV, WEBM, OGG, 3GP or 3G2 video of at
   * most 100 MB, streamed from disk, and returns the `ticket_id` of its transcode job.
   */
  uploadVideo(file: FileInput, options?: UploadOptions): Promise<res.UploadVideoResult> {
    return this.#upload('video', uploads.video, file, options);
  }

  /**
   * `POST /api/v2/public/upload/audio`: uploads an MP3, WAV, OGG, M4A or AAC file of at most 100 MB and
   * returns the four values `sendAudio` and `items.audio` take.
   */
  uploadAudio(file: FileInput, options?: UploadOptions): Promise<res.UploadAudioResult> {
    return this.#upload('audio', uploads.audio, file, options);
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
  async close(): Promise<void> {
    if (this.#calls.closed) return;
    // Every wait ends now (queue, token, backoff, transcode), and requests in flight are aborted: a
    // call that never sent its request says so (`deliveryUnknown: false`).
    this.#calls.closeAll();
    this.#limiter?.stop();
    if (this.#own) await this.#own.destroy();
  }

  /**
   * `close()`, for `await using client = new OAClient()`: the client is closed when the block ends,
   * however it ends.
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}
