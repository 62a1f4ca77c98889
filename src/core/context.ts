/**
 * The context a client's calls share, made once from its options: the limiter, the token manager,
 * the headers, the transport, the events and the calls in flight. Constructing it opens nothing (no
 * socket, no timer). It is also where the token endpoints and the client's own uses of them live.
 */
import type * as z from 'zod/mini';
import { defaultTransport } from '#core-runtime';
import { type Endpoint, endpoints } from '../endpoints.js';
import { OAConfigError, OAError, OAUnauthorizedError, OAValidationError } from '../errors.js';
import { UploadOptionsSchema } from '../schemas/requests.js';
import type { TokenPair } from '../schemas/responses.js';
import { prepareUpload } from '../uploads/prepare.js';
import { discardInput } from '../uploads/source.js';
import type { FileInput, PreparedUpload, UploadKind, UploadOptions } from '../uploads/types.js';
import { UploadReuse } from '../uploads/upload-reuse.js';
import { MemoryTokenStore, type TokenManager } from './auth.js';
import { CallRegistry } from './call-control.js';
import { CredentialSource, type OACredentials } from './credentials.js';
import { ClientEvents } from './events.js';
import { FetchTransport } from './fetch-transport.js';
import { type CallHooks, joinHooks } from './hooks.js';
import { type Logger, loggerFor } from './logger.js';
import { makeState, type OAState, type OAStates, oaKey, type StateOptions } from './oa-state.js';
import {
  checkOptions,
  type OAClientOptions,
  type RequestHeaders,
  type RequestOptions,
  type ResolvedOptions,
  requestHeaders,
  resolveOptions,
} from './options.js';
import { call, callUpload, tokenExchange } from './pipeline.js';
import type { Limiter, Permit, RateLimits } from './rate-limit.js';
import type { PipelineContext } from './retry.js';
import type { Transport } from './transport.js';

/**
 * What the clients of `createAccounts` share, made once from its `clientOptions` (checked there): the
 * options as resolved, the headers, the logger and the transport with its connection pools.
 */
export interface SharedClientParts {
  /** The accounts' client options, their token store filled in. */
  readonly options: OAClientOptions;
  readonly resolved: ResolvedOptions;
  /** Where an account whose credentials name no base URL sends; `undefined`: each must name one. */
  readonly baseUrl: URL | undefined;
  readonly headers: RequestHeaders;
  /** Each endpoint's URL at `baseUrl`, for every account that sends there. */
  readonly urls: Map<string, URL>;
  readonly logger: Logger;
  /** Every account's transport (one pool per origin); no client closes it. */
  readonly transport: Transport;
  /** What is kept per OA, shared by every account's client that speaks for it. */
  readonly states: OAStates;
}

/** One account's client of `createAccounts`: the shared parts, its id, its credentials and transport. */
export interface AccountClientParts {
  readonly shared: SharedClientParts;
  readonly account: string;
  /** Kept by the accounts beyond the client: a client made again for the account asks no one. */
  readonly credentials: CredentialSource;
  /**
   * The shared transport, entered through the account's share of its pools (`AccountTransport`), else
   * the shared transport itself. Kept with the credentials: a client made again for the account counts
   * the requests still out through the one it replaces.
   */
  readonly transport: Transport;
}

/**
 * The client's tracing as hooks of the one seam around a call, made from the context's events, base
 * URL, limits and logger: handed in by the client (the telemetry is the client's part, not the
 * pipeline's), `undefined` for none.
 */
export type ClientTracing = (
  events: ClientEvents,
  baseUrl: URL,
  limits: RateLimits | false,
  logger: Logger,
) => CallHooks | undefined;

/** Stands for the base URL of an account that must name its own, until its credentials do. */
export const NO_BASE_URL = new URL('https://base-url.invalid');

/**
 * The transport a client sends with: the caller's `fetch` on any runtime; else undici on Node (the
 * caller's `dispatcher`, else an Agent of its own, its pools capped at `connectionsPerOrigin` when
 * given) and the global `fetch` elsewhere.
 */
export function clientTransport(
  options: Pick<OAClientOptions, 'fetch' | 'dispatcher'>,
  proxyFromEnv: boolean,
  connectionsPerOrigin?: number,
): Transport {
  if (options.fetch) return new FetchTransport(options.fetch);
  return defaultTransport(
    options.dispatcher,
    proxyFromEnv,
    options.dispatcher ? undefined : connectionsPerOrigin,
  );
}

/** One client's {@link PipelineContext}. */
export class ClientContext implements PipelineContext {
  readonly #credentials: CredentialSource;
  baseUrl: URL;
  /** Each endpoint's URL at `baseUrl`: the accounts' own map while an account's client sends there. */
  urls: Map<string, URL>;
  /**
   * Set while a client whose credentials come from a provider has not read them (they say where it
   * sends and whose token and quota it uses): each call awaits it first, within its deadline.
   */
  prepare: (() => Promise<void>) | undefined;
  /** The transport is the client's own, closed by {@link close}; not the accounts' shared one. */
  readonly #ownsTransport: boolean;
  /** The credentials come from a provider, whose answer may name a base URL. */
  readonly #provided: boolean;
  /** The base URL of the accounts, when the credentials name none. */
  readonly #defaultBaseUrl: URL | undefined;
  /** What is kept for the OA the client speaks to now; unset until a provider's credentials are read. */
  #state: OAState | undefined;
  /**
   * The key of what is kept for the OA the client speaks to ({@link oaKey}): its token pair, limits,
   * ready videos and upload answers. These three are the state's, copied as fields (read on every call).
   */
  stateKey = '';
  limiter: Limiter | undefined;
  /** Set with the state: a call reads it only after `prepare`. */
  tokens!: TokenManager;
  /** Where states come from: the accounts' shared ones, else the client's own (stopped by close()). */
  readonly #states: (key: string) => OAState;
  /** The client's own states (not an account's), one per OA it spoke to: stopped by close(). */
  readonly #ownStates = new Map<string, OAState>();
  readonly headers: RequestHeaders;
  readonly timeoutMs: number;
  readonly uploadTimeoutMs: number;
  readonly maxRetries: number;
  readonly maxBusyWaitMs: number;
  readonly transport: Transport;
  readonly events: ClientEvents;
  readonly logger: Logger;
  readonly calls = new CallRegistry();
  readonly hooks: CallHooks | undefined;
  /** The reuse of upload answers for the same bytes (`reuseUploads`), unless turned off. */
  readonly #uploadReuse: UploadReuse | undefined;

  /**
   * A client of its own options, or (`account`) one account's client of `createAccounts`; `tracing`
   * makes its tracing's hooks, which go ahead of the caller's.
   */
  constructor(options: OAClientOptions, tracing: ClientTracing, account?: AccountClientParts) {
    const shared = account?.shared;
    const resolved = shared?.resolved ?? resolveOptions(options);
    const { apiKey, apiSecret, rateLimit } = resolved;
    const { coordination } = options;
    this.#credentials =
      account?.credentials ??
      new CredentialSource(
        options.credentials ? undefined : { apiKey, apiSecret },
        options.credentials,
        options.account,
        options.allowInsecureHttp,
        options.credentialsTimeoutMs,
      );
    this.#defaultBaseUrl = shared ? shared.baseUrl : resolved.baseUrl;
    this.baseUrl = this.#defaultBaseUrl ?? NO_BASE_URL;
    this.urls = shared?.urls ?? new Map();
    this.#ownsTransport = shared === undefined;
    this.#provided = account !== undefined || options.credentials !== undefined;
    if (this.#provided) {
      this.prepare = async () => {
        this.#sendTo(await this.#credentials.current());
        this.prepare = undefined;
      };
    }
    this.logger = shared?.logger ?? loggerFor(options.logger, options.logLevel);
    this.events = new ClientEvents(this.logger);
    if (shared) {
      this.#states = (key) => shared.states.of(key);
    } else {
      const stateOptions: StateOptions = {
        coordination,
        tokenStore: options.tokenStore ?? new MemoryTokenStore(),
        rateLimit,
        refreshBeforeExpiryMs: resolved.refreshBeforeExpiryMs,
        logger: this.logger,
      };
      this.#states = (key) => {
        let state = this.#ownStates.get(key);
        if (!state) {
          state = makeState(key, stateOptions);
          this.#ownStates.set(key, state);
        }
        return state;
      };
    }
    if (!this.#provided) this.#use(this.#states(oaKey(resolved.baseUrl, apiKey)));
    this.headers = shared?.headers ?? requestHeaders(options.appInfo, options.defaultHeaders);
    this.transport = account?.transport ?? clientTransport(options, resolved.proxyFromEnv);
    this.timeoutMs = resolved.timeoutMs;
    this.uploadTimeoutMs = resolved.uploadTimeoutMs;
    this.maxRetries = resolved.maxRetries;
    this.maxBusyWaitMs = resolved.maxBusyWaitMs;
    // The client's tracing is hooks like any other, ahead of the caller's: one seam around a call.
    this.hooks = joinHooks(tracing(this.events, this.baseUrl, rateLimit, this.logger), options.hooks);
    this.#uploadReuse =
      resolved.reuseUploadsTtlMs === false
        ? undefined
        : new UploadReuse(this, resolved.reuseUploadsTtlMs, coordination?.uploadAnswers);
  }

  secrets(): string[] {
    const held = this.#credentials.held;
    const tokens = this.#state?.tokens.knownSecrets() ?? [];
    return held ? [held.apiSecret, ...tokens] : tokens;
  }

  /**
   * Endpoint 1 for a renewal of the state `key`: one exchange, no retry loop of its own (see
   * `tokenExchange`). Refused credentials from a provider are asked for again once, and a changed
   * answer logs in at once; an answer that names another OA moves the client there, and this renewal
   * (of the old OA's token) ends not sent, so that its calls try again with the new OA's state.
   */
  async login(slot: Permit | undefined, key: string): Promise<TokenPair> {
    const used = await this.#credentials.current();
    this.#follow(used, key);
    try {
      return await this.#loginWith(used, slot);
    } catch (error) {
      if (!(error instanceof OAUnauthorizedError)) throw error;
      const changed = await this.#credentials.refused(used, error, true);
      if (!changed) throw this.#credentials.named(error);
      this.#follow(changed, key);
      try {
        return await this.#loginWith(changed, undefined);
      } catch (again) {
        if (again instanceof OAUnauthorizedError) await this.#credentials.refused(changed, again, false);
        throw again;
      }
    }
  }

  /** Endpoint 2 for a renewal of the state `key`, the same way. */
  refresh(refresh_token: string, slot: Permit | undefined, key: string): Promise<TokenPair> {
    if (this.#state?.key !== key) return Promise.reject(this.#movedAway());
    return tokenExchange(this, endpoints.refreshToken, { refresh_token }, slot);
  }

  /**
   * Sends where `credentials` say from now on, with the state of their OA; throws (not sent) when that
   * is no longer the state `key` being renewed.
   */
  #follow(credentials: OACredentials, key: string): void {
    if (this.#provided) this.#sendTo(credentials);
    if (this.#state?.key !== key) throw this.#movedAway();
  }

  #movedAway(): OAError {
    const whose =
      this.#credentials.account === undefined ? '' : ` of OA account ${this.#credentials.account}`;
    return new OAError(
      `The credentials${whose} now name another OA (another api key or base URL): nothing of the old OA is used for it; nothing was sent`,
      { failure: 'not_sent' },
    );
  }

  /**
   * Sends where `credentials` say (their base URL, else the accounts' own), with what is kept for that
   * OA: an account's credentials read again after a refusal may name another.
   */
  #sendTo(credentials: OACredentials): void {
    const target = credentials.baseUrl === undefined ? this.#defaultBaseUrl : new URL(credentials.baseUrl);
    if (!target) {
      throw new OAConfigError(
        `OA account ${this.#credentials.account ?? ''} has no base URL: its credentials name none, and createAccounts was given none (clientOptions.baseUrl, OA_BASE_URL); nothing was sent`,
      );
    }
    const key = oaKey(target, credentials.apiKey);
    if (this.#state?.key !== key) this.#use(this.#states(key));
    if (target.href === this.baseUrl.href) return;
    this.baseUrl = target;
    this.urls = new Map();
  }

  #use(state: OAState): void {
    this.#state = state;
    this.stateKey = state.key;
    this.limiter = state.limiter;
    this.tokens = state.tokens;
  }

  async #loginWith(credentials: OACredentials, slot: Permit | undefined): Promise<TokenPair> {
    const params = { api_key: credentials.apiKey, api_secret: credentials.apiSecret };
    const pair = await tokenExchange(this, endpoints.generateToken, params, slot);
    this.#credentials.accepted();
    return pair;
  }

  /** `generateToken()`: endpoint 1 as a call of the caller's; the client keeps the pair. */
  async generateToken(options: RequestOptions | undefined): Promise<TokenPair> {
    const credentials = await this.#credentials.current();
    if (this.#provided) this.#sendTo(credentials);
    const params = { api_key: credentials.apiKey, api_secret: credentials.apiSecret };
    const pair = await call(this, endpoints.generateToken, params, options);
    await this.tokens.save(pair);
    return pair;
  }

  /** `refreshToken()`: endpoint 2 with the given refresh token, else the one held. */
  async refreshToken(refresh_token: string | undefined, options: RequestOptions | undefined) {
    await this.prepare?.();
    const token = refresh_token ?? (await this.tokens.currentRefreshToken());
    if (token === undefined) {
      throw new OAValidationError(
        'refreshToken: no refresh token held (none yet, or the API gave none); call generateToken()',
        [{ path: ['refresh_token'], message: 'Required' }],
      );
    }
    const pair = await call(this, endpoints.refreshToken, { refresh_token: token }, options);
    await this.tokens.save(pair);
    return pair;
  }

  /** An upload: options checked before the file is read, the file read and checked, then the call. */
  async upload<R extends z.ZodMiniType>(
    kind: UploadKind,
    endpoint: Endpoint<z.ZodMiniType, R>,
    file: FileInput,
    options: UploadOptions | undefined,
  ): Promise<z.output<R>> {
    let checked: UploadOptions;
    try {
      checked = checkOptions(this, endpoint, options, UploadOptionsSchema);
    } catch (error) {
      // Refused before it was read: a stream handed over is not left open.
      discardInput(file);
      throw error;
    }
    // The call starts before the file is read: a stream that stalls while its first bytes are read is
    // ended by the call's deadline, its signal and close(), and released at once.
    const control = this.calls.start(`POST ${endpoint.path}`, checked);
    let prepared: PreparedUpload;
    try {
      // The answers reused are those of the OA the client speaks to: its credentials say which.
      if (this.prepare) await control.wait(this.prepare(), "reading the account's credentials");
      prepared = await control.wait(
        prepareUpload(kind, file, { ...checked, signal: control.signal }),
        'reading the file',
      );
    } catch (error) {
      control.end();
      throw error;
    }
    try {
      // A stream can be read once only: hashing it would mean holding it whole, so it is sent as it is.
      if (this.#uploadReuse === undefined || !prepared.replayable) {
        return await callUpload(this, endpoint, prepared, checked, control);
      }
      return await this.#uploadReuse.upload(endpoint, prepared, control, checked.onProgress, () =>
        callUpload(this, endpoint, prepared, checked, control),
      );
    } finally {
      // The upload's own call ends its control; an answer reused (or a read that failed) ends it here.
      control.end();
      prepared.discard();
    }
  }

  /**
   * Stops every call (each wait ends now; requests in flight are aborted, and a call that never sent
   * its request says so) and releases the client's own sockets (an account's client has none: the
   * accounts' pool is closed by `accounts.close()`).
   */
  async close(): Promise<void> {
    if (this.calls.closed) return;
    this.calls.closeAll();
    // An account's states are the accounts' (other clients of the OA may use them): closed with them.
    for (const state of this.#ownStates.values()) state.limiter?.stop();
    if (this.#ownsTransport) await this.transport.close();
  }
}
