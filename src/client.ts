import { Agent, type Dispatcher } from 'undici';
import type { z } from 'zod';
import { TokenManager } from './core/auth.js';
import { type Logger, silentLogger } from './core/logger.js';
import { type OAClientOptions, type ResolvedOptions, resolveOptions } from './core/options.js';
import { callEndpoint, type Endpoint, type RequestContext, type RequestOptions } from './core/request.js';
import { MemoryTokenStore } from './core/token-store.js';
import { OAValidationError } from './errors.js';
import * as req from './schemas/requests.js';
import * as res from './schemas/responses.js';

const API = '/api/v2/public';

/** The JSON endpoints of the spec, declared: the path, what goes in, what comes out, how it may repeat. */
const endpoints = {
  generateToken: {
    name: 'generateToken',
    path: `${API}/auth/token`,
    params: req.GenerateTokenParamsSchema,
    response: res.TokenPairSchema,
    auth: false,
    isSend: false,
  },
  refreshToken: {
    name: 'refreshToken',
    path: `${API}/auth/refresh-token`,
    params: req.RefreshTokenParamsSchema,
    response: res.TokenPairSchema,
    auth: false,
    isSend: false,
  },
  sendGreeting: {
    name: 'sendGreeting',
    path: `${API}/webhook/broadcast-greeting`,
    params: req.SendGreetingParamsSchema,
    response: res.GreetingSchema,
    auth: true,
    isSend: true,
  },
  sendImage: {
    name: 'sendImage',
    path: `${API}/webhook/broadcast-image-link`,
    params: req.SendImageParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
  },
  sendText: {
    name: 'sendText',
    path: `${API}/webhook/broadcast-message`,
    params: req.SendTextParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
  },
  broadcast: {
    name: 'broadcast',
    path: `${API}/message/broadcast-message`,
    params: req.BroadcastParamsSchema,
    response: res.BroadcastRecordSchema,
    auth: true,
    isSend: true,
  },
  broadcastToGroup: {
    name: 'broadcastToGroup',
    path: `${API}/message/broadcast-group-message`,
    params: req.BroadcastToGroupParamsSchema,
    response: res.BroadcastRecordSchema,
    auth: true,
    isSend: true,
  },
  broadcastToMemberSession: {
    name: 'broadcastToMemberSession',
    path: `${API}/message/broadcast-member-session`,
    params: req.BroadcastToMemberSessionParamsSchema,
    response: res.BroadcastRecordSchema,
    auth: true,
    isSend: true,
  },
  sendVideo: {
    name: 'sendVideo',
    path: `${API}/webhook/broadcast-video`,
    params: req.SendVideoParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
  },
  sendAudio: {
    name: 'sendAudio',
    path: `${API}/webhook/broadcast-audio`,
    params: req.SendAudioParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
  },
} as const;

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
  readonly #ownDispatcher: boolean;
  #dispatcher: Dispatcher | undefined;
  #closed = false;

  constructor(options: OAClientOptions = {}) {
    this.#options = resolveOptions(options);
    const logger: Logger = options.logger ?? silentLogger;
    this.#dispatcher = options.dispatcher;
    this.#ownDispatcher = options.dispatcher === undefined;
    const { apiKey, apiSecret } = this.#options;
    this.#tokens = new TokenManager({
      store: options.tokenStore ?? new MemoryTokenStore(),
      key: apiKey,
      login: () => this.#call(endpoints.generateToken, { api_key: apiKey, api_secret: apiSecret }),
      refresh: (refresh_token) => this.#call(endpoints.refreshToken, { refresh_token }),
      refreshBeforeExpiryMs: this.#options.refreshBeforeExpiryMs,
      logger,
    });
    this.#ctx = {
      baseUrl: this.#options.baseUrl,
      // Created on first use, so that constructing a client opens nothing.
      dispatcher: () => {
        this.#dispatcher ??= new Agent();
        return this.#dispatcher;
      },
      timeoutMs: this.#options.timeoutMs,
      maxRetries: this.#options.maxRetries,
      logger,
      tokens: this.#tokens,
      secrets: () => [apiSecret, ...this.#tokens.knownSecrets()],
      isClosed: () => this.#closed,
    };
  }

  #call<R extends z.ZodType>(endpoint: Endpoint<z.ZodType, R>, params: unknown, options?: RequestOptions) {
    return callEndpoint(this.#ctx, endpoint, params, options);
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
        'refreshToken: the client holds no refresh token yet; call generateToken() first',
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
   * @example client.broadcast({ target: 'all', items: [items.text('Hello')] })
   */
  broadcast(params: req.BroadcastParams, options?: RequestOptions): Promise<res.BroadcastRecord> {
    return this.#call(endpoints.broadcast, params, options);
  }

  /** `POST /api/v2/public/message/broadcast-group-message`: up to 5 items to every member of a group. */
  broadcastToGroup(
    params: req.BroadcastToGroupParams,
    options?: RequestOptions,
  ): Promise<res.BroadcastRecord> {
    return this.#call(endpoints.broadcastToGroup, params, options);
  }

  /** `POST /api/v2/public/message/broadcast-member-session`: up to 5 items to a member-group broadcast session. */
  broadcastToMemberSession(
    params: req.BroadcastToMemberSessionParams,
    options?: RequestOptions,
  ): Promise<res.BroadcastRecord> {
    return this.#call(endpoints.broadcastToMemberSession, params, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-video`: a transcoded video (`ticket_id` of `uploadVideo`) to one user. */
  sendVideo(params: req.SendVideoParams, options?: RequestOptions): Promise<res.SendResult> {
    return this.#call(endpoints.sendVideo, params, options);
  }

  /** `POST /api/v2/public/webhook/broadcast-audio`: an uploaded audio file to one user. */
  sendAudio(params: req.SendAudioParams, options?: RequestOptions): Promise<res.SendResult> {
    return this.#call(endpoints.sendAudio, params, options);
  }

  /**
   * Releases the client's sockets at once (a dispatcher you passed in stays yours). Calls made after
   * `close()` reject. A script that simply ends needs no `close()`.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownDispatcher && this.#dispatcher) await this.#dispatcher.close();
  }
}
