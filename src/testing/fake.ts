/**
 * The transport-independent core of the fake OA API: it takes a request (method, URL, headers, body
 * bytes) and says what to do with it (answer, reset, hang). The node:http server and the msw handlers are
 * thin layers over it.
 */
import { randomUUID } from 'node:crypto';
import { accountList, accountOptions } from './accounts.js';
import {
  type Answer,
  API,
  DEFAULT_GREETING,
  dataAnswer,
  errorAnswer,
  formatTimestamp,
  tooManyRequestsAnswer,
  topLevelErrorAnswer,
} from './answers.js';
import { FaultQueue, faultErrorAnswer } from './faults.js';
import { HeldRequests } from './held.js';
import { normalizeHeaders, type ParsedBody, parseBody } from './incoming.js';
import { unverifiedClaims } from './jwt.js';
import { MediaStore } from './media.js';
import { recipientsOf, usersSeen } from './members.js';
import { fixedWindow, type RateWindow, slidingWindow } from './rate-limit.js';
import { newRecord, settle } from './recording.js';
import { bearerToken, type FakeTokenPair, TokenIssuer } from './tokens.js';
import type {
  Delivery,
  DeliveryEndpoint,
  FakeMembers,
  FakeOAOptions,
  FakeOutcome,
  FakeRequest,
  Fault,
  FaultKind,
  FaultOptions,
  GreetingRecord,
  InjectedFault,
  RecordedRequest,
  StoredUpload,
} from './types.js';
import { UPLOAD_RULES, type UploadKind } from './uploads.js';
import { validateBody } from './validation.js';

const UPLOAD_PREFIX = `${API}/upload`;
/** The info text of spec 12's convert-status error. */
const CONVERTING = 'Video is in convert status';

interface Context {
  path: string;
  now: number;
  parsed: ParsedBody;
}

type Handler = (ctx: Context, body: Record<string, unknown>) => Answer | Promise<Answer>;

/** Set to something: the validation treats an optional field's `null` and `''` as absent. */
const present = (value: unknown) => value !== undefined && value !== null && value !== '';

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A JSON body's object, or nothing. */
function jsonObject(body: Uint8Array): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(body).toString('utf8'));
    return isRecord(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A stateful fake of the whole OA Public Messaging API, independent of any transport. Use it through
 * {@link createMockServer} (a real HTTP server) or `createMswHandlers` (`oa-messaging/testing/msw`), or
 * call {@link FakeOA.handle} yourself.
 */
export class FakeOA {
  /** The api key endpoint 1 accepts (for this account). */
  readonly apiKey: string;
  /** The api secret endpoint 1 accepts (for this account); {@link FakeOA.rotateSecret} changes it. */
  get apiSecret(): string {
    return this.#apiSecret;
  }
  /** The OA account's username: the `username` of its inbound events. */
  readonly username: string;
  /** Every request received, oldest first (in flight ones included, with `outcome: 'pending'`). */
  readonly requests: RecordedRequest[] = [];
  /** Every send and broadcast accepted, oldest first: one entry per message delivered. */
  readonly deliveries: Delivery[] = [];
  /** The greeting of endpoint 3; `null` makes it answer 404. May be changed at any time. */
  greeting: GreetingRecord | null;
  /** When set, a greeting to a user not in it answers 404. May be changed at any time. */
  knownUsers: Set<string> | undefined;
  /** Base of the URLs of uploaded files. */
  publicUrl: string | undefined;
  /** Who the broadcasts that name no users reach (see `FakeOAOptions.members`); may be changed. */
  members: FakeMembers;

  #apiSecret: string;
  readonly #now: () => number;
  readonly #retryAfter: boolean;
  readonly #jobMs: number;
  readonly #successStatus: number;
  readonly #general: RateWindow | undefined;
  readonly #upload: RateWindow | undefined;
  readonly #faults = new FaultQueue();
  readonly #tokens: TokenIssuer;
  readonly #media: MediaStore;
  #jobEndsAt = Number.NEGATIVE_INFINITY;
  readonly #held = new HeldRequests();
  readonly #routes: Record<string, Handler>;
  /** The accounts this fake serves, itself first; an account of another fake: itself only. */
  readonly #accounts: FakeOA[] = [this];
  /** The accounts by api key (the first with a key, should two share it): a request's account at once. */
  readonly #byKey = new Map<string, FakeOA>();
  /** The fake whose `changed` is told of this account's changes: the one that serves it. */
  #root: FakeOA = this;

  /** A fake with its own keys, tokens, limits and records; see {@link FakeOAOptions} for the defaults. */
  constructor(options: FakeOAOptions = {}) {
    const [first, ...others] = accountList(options);
    if (options.accounts !== undefined && first) {
      // An iterable of users may be read only once: every account gets the same list.
      const shared = { ...options, knownUsers: options.knownUsers && [...options.knownUsers] };
      options = accountOptions(shared, first);
      for (const account of others) {
        const fake = new FakeOA(accountOptions(shared, account));
        fake.#root = this;
        this.#accounts.push(fake);
      }
    }
    this.apiKey = first?.apiKey ?? '';
    for (const account of this.#accounts) {
      if (!this.#byKey.has(account.apiKey)) this.#byKey.set(account.apiKey, account);
    }
    this.#apiSecret = first?.apiSecret ?? '';
    this.username = first?.username ?? '';
    this.greeting = options.greeting === undefined ? structuredClone(DEFAULT_GREETING) : options.greeting;
    this.knownUsers = options.knownUsers ? new Set(options.knownUsers) : undefined;
    this.publicUrl = options.publicUrl?.replace(/\/+$/, '');
    this.members = options.members ? structuredClone(options.members) : {};
    this.#now = options.now ?? Date.now;
    this.#tokens = new TokenIssuer({
      apiKey: this.apiKey,
      username: this.username,
      lifetimeMs: options.tokenLifetimeMs ?? 3_600_000,
      refreshLifetimeMs: options.refreshTokenLifetimeMs ?? 7 * 86_400_000,
      rotateRefreshTokens: options.rotateRefreshTokens ?? true,
    });
    this.#retryAfter = options.retryAfter ?? false;
    this.#jobMs = options.broadcastJobMs ?? 0;
    this.#successStatus = options.successStatus ?? 201;
    const maxBytes: Record<UploadKind, number> = {
      image: options.maxFileBytes?.image ?? UPLOAD_RULES.image.maxBytes,
      video: options.maxFileBytes?.video ?? UPLOAD_RULES.video.maxBytes,
      audio: options.maxFileBytes?.audio ?? UPLOAD_RULES.audio.maxBytes,
    };
    this.#media = new MediaStore({ transcodeMs: options.transcodeMs ?? 2000, maxBytes });
    if (options.rateLimit !== false) {
      const limits = options.rateLimit ?? {};
      const make = limits.mode === 'fixed' ? fixedWindow : slidingWindow;
      this.#general = make(limits.general ?? { max: 200, windowMs: 60_000 });
      this.#upload = make(limits.upload ?? { max: 20, windowMs: 60_000 });
    }
    this.#routes = {
      'auth/token': (ctx, b) => this.#token(ctx, b),
      'auth/refresh-token': (ctx, b) => this.#refresh(ctx, b),
      'webhook/broadcast-greeting': (ctx, b) => this.#greeting(ctx, b),
      'webhook/broadcast-image-link': (ctx, b) => {
        const item = present(b.link)
          ? { type: 'oa_image_link', msg: b.image_url, link: b.link }
          : { type: 'image', msg: b.image_url };
        return this.#sendOne(ctx, 'sendImage', b, item);
      },
      'webhook/broadcast-message': (ctx, b) =>
        this.#sendOne(ctx, 'sendText', b, {
          type: 'message',
          msg: b.msg,
          ...(present(b.desc) ? { desc: b.desc } : {}),
        }),
      'message/broadcast-message': (ctx, b) => this.#broadcast(ctx, 'broadcast', b),
      'message/broadcast-group-message': (ctx, b) => this.#broadcast(ctx, 'broadcastToGroup', b),
      'message/broadcast-member-session': (ctx, b) => this.#broadcast(ctx, 'broadcastToMemberSession', b),
      'webhook/broadcast-video': (ctx, b) => this.#sendVideo(ctx, b),
      'webhook/broadcast-audio': (ctx, b) => {
        const { audio_url, audio_uuid, audio_size, audio_duration } = b;
        const item = { type: 'audio', msg: audio_url, audio_uuid, audio_size, audio_duration };
        return this.#sendOne(ctx, 'sendAudio', b, item);
      },
      'upload/image': (ctx) => this.#uploadFile(ctx, 'image'),
      'upload/video': (ctx) => this.#uploadFile(ctx, 'video'),
      'upload/audio': (ctx) => this.#uploadFile(ctx, 'audio'),
    };
  }

  /** The fake's clock, in ms since the epoch (the `now` option, else `Date.now()`). */
  now(): number {
    return this.#now();
  }

  /**
   * Every account this fake serves, the first being the fake itself (see `FakeOAOptions.accounts`); one
   * for a fake of one account.
   */
  get accounts(): readonly FakeOA[] {
    return [...this.#accounts];
  }

  /**
   * One account of this fake, by its username or api key; without one, the first (the fake itself).
   * Its members read and change that account only: `fake.account('shop-b').requests` is empty when
   * account `shop-b` received nothing.
   * @throws RangeError when no account has that username or key
   */
  account(usernameOrApiKey?: string): FakeOA {
    if (usernameOrApiKey === undefined) return this;
    const found =
      this.#accounts.find((a) => a.username === usernameOrApiKey) ??
      this.#accounts.find((a) => a.apiKey === usernameOrApiKey);
    if (found) return found;
    const names = this.#accounts.map((a) => a.username).join(', ');
    throw new RangeError(`the fake has no account '${usernameOrApiKey}' (its accounts: ${names})`);
  }

  /**
   * The account a request acts on, told apart as the service does: at endpoint 1 by its `api_key`, at
   * endpoint 2 by the account that issued the refresh token, elsewhere by the account that issued the
   * bearer token (an uploaded file: the account that stores it). A request that names no account of
   * this fake goes to the first, which refuses it as the API would (401).
   */
  accountOf(request: Pick<FakeRequest, 'url' | 'headers' | 'body'>): FakeOA {
    if (this.#accounts.length === 1) return this;
    const path = new URL(request.url, 'http://fake.invalid').pathname.replace(/(.)\/+$/, '$1');
    const headers = normalizeHeaders(request.headers);
    let found: FakeOA | undefined;
    if (path === `${API}/auth/token`) {
      const key = jsonObject(request.body)?.api_key;
      found = typeof key === 'string' ? this.#byKey.get(key) : undefined;
    } else if (path === `${API}/auth/refresh-token`) {
      const token = jsonObject(request.body)?.refresh_token;
      found = this.#accounts.find((a) => typeof token === 'string' && a.#tokens.issued(token));
    } else {
      const token = bearerToken(headers.authorization);
      // The claim only picks the account; that account then verifies the token's signature.
      const key = token === undefined ? undefined : unverifiedClaims(token)?.api_key;
      found =
        key === undefined
          ? this.#accounts.find((a) => a.#media.file(path) !== undefined)
          : typeof key === 'string'
            ? this.#byKey.get(key)
            : undefined;
    }
    return found ?? this;
  }

  /**
   * Handles one request: finds its account ({@link accountOf}), which records it, applies a matching
   * fault of its own, else processes it as the API would.
   */
  handle(request: FakeRequest): Promise<FakeOutcome> {
    return this.accountOf(request).#handleHere(request);
  }

  /**
   * Told when an account's state changed outside a request (faults, reset, tokens, transcodes); the
   * mock server refreshes its web inbox. Does nothing here.
   */
  protected changed(): void {}

  async #handleHere(request: FakeRequest): Promise<FakeOutcome> {
    const now = request.receivedAt ?? this.#now();
    const started = performance.now();
    const url = new URL(request.url, 'http://fake.invalid');
    const headers = normalizeHeaders(request.headers);
    const record = newRecord(request.method, url, headers, request.body.byteLength, now);
    this.requests.push(record);
    const parsed = await parseBody(headers['content-type'] ?? '', request.body);
    record.body = 'json' in parsed ? parsed.json : parsed.text;
    if (parsed.form) record.parts = parsed.form.parts;

    const fault = this.#faults.take(record.method, record.path);
    if (fault) record.fault = fault.kind;
    const finish = (answer: Answer): FakeOutcome => {
      settle(record, 'answered', started, answer);
      return { type: 'respond', ...answer };
    };
    switch (fault?.kind) {
      case 'reset-before-processing':
        settle(record, 'reset', started);
        return { type: 'reset' };
      case 'hang':
        record.outcome = 'hang';
        return { type: 'hang', released: this.#held.hang() };
      case 'error':
        return finish(faultErrorAnswer(fault, record.path, now));
      case 'rate-limit': {
        const seconds = fault.retryAfterSeconds ?? (this.#retryAfter ? 1 : undefined);
        return finish(tooManyRequestsAnswer(record.path, now, seconds));
      }
      case 'delay':
        await this.#held.pause(fault.delayMs ?? 2000);
    }
    const answer = await this.#process(record, parsed, now);
    if (fault?.kind !== 'reset-after-processing') return finish(answer);
    settle(record, 'reset', started, answer);
    return { type: 'reset' };
  }

  /**
   * Makes the next matching request(s) fail. A number is an error status; a kind alone uses that kind's
   * defaults (`'error'` is a 500 in the spec's layout).
   * @example fake.injectFault('reset-after-processing', { path: '/webhook/broadcast-message' })
   */
  injectFault(fault: Fault | FaultKind | number, options: FaultOptions = {}): InjectedFault {
    const injected = this.#faults.add(fault, options);
    this.#root.changed();
    return injected;
  }

  /** The injected faults not used up yet, oldest first. */
  get faults(): InjectedFault[] {
    return this.#faults.list();
  }

  /** Removes every injected fault not used up yet. */
  clearFaults(): void {
    this.#faults.clear();
    this.#root.changed();
  }

  /**
   * Back to a clean state: forgets requests, deliveries, uploads, tickets, running jobs, rate-limit
   * counts and faults, and releases hung requests, of every account this fake serves (of this one
   * only, called on `fake.account(name)`). Issued tokens stay valid (see {@link revokeTokens}).
   */
  reset(): void {
    for (const account of this.#accounts) {
      account.requests.length = 0;
      account.deliveries.length = 0;
      account.#media.clear();
      account.#jobEndsAt = Number.NEGATIVE_INFINITY;
      account.#general?.clear();
      account.#upload?.clear();
      account.#faults.clear();
      account.#held.releaseAll();
    }
    this.#root.changed();
  }

  /**
   * A new api secret for this account, as when its owner rotates it in the OA's settings: from now on
   * endpoint 1 refuses the old one (401 `UNAUTHORIZED`, recorded with the request's `status`), and
   * every token issued so far stops working, as {@link revokeTokens}. Call it on the account:
   * `fake.account('shop-b').rotateSecret('new-secret')`.
   * @example fake.account('shop-b').rotateSecret('s3cret-2'); // then the platform's store learns it
   */
  rotateSecret(apiSecret: string): void {
    if (typeof apiSecret !== 'string' || apiSecret === '') {
      throw new TypeError('rotateSecret needs the new api secret (a non-empty string)');
    }
    this.#apiSecret = apiSecret;
    this.revokeTokens();
  }

  /** Makes every access and refresh token issued so far invalid (401 from then on). */
  revokeTokens(): void {
    this.#tokens.revoke();
    this.#root.changed();
  }

  /**
   * Makes every access token issued so far expired (401 `Token expired`), as if its hour had passed;
   * refresh tokens keep working, unlike {@link revokeTokens}.
   */
  expireAccessTokens(): void {
    this.#tokens.expireAccessTokens();
    this.#root.changed();
  }

  /** Where a video ticket is in its transcode: `undefined` for a ticket the fake never issued. */
  transcodeStatus(ticket_id: string): 'converting' | 'finished' | undefined {
    const problem = this.#media.ticketProblem(ticket_id, this.#now());
    if (problem === 'unknown') return undefined;
    return problem === 'converting' ? 'converting' : 'finished';
  }

  /** Ends the convert status of one video ticket, or of all, at once. */
  completeTranscodes(ticket_id?: string): void {
    this.#media.completeTranscodes(this.#now(), ticket_id);
    this.#root.changed();
  }

  /**
   * Lets every hung request go, of every account this fake serves: the transports then drop their
   * connections.
   */
  releaseHungRequests(): void {
    for (const account of this.#accounts) account.#held.releaseAll();
  }

  /** A valid token pair, as endpoint 1 would issue it, without a request. */
  issueTokenPair(): FakeTokenPair {
    return this.#tokens.issue(this.#now());
  }

  /** Every file stored by the upload endpoints, oldest first. */
  get uploads(): StoredUpload[] {
    return this.#media.uploads;
  }

  async #process(record: RecordedRequest, parsed: ParsedBody, now: number): Promise<Answer> {
    const path = record.path.length > 1 ? record.path.replace(/\/+$/, '') : record.path;
    const file = this.#media.file(path);
    if (file && (record.method === 'GET' || record.method === 'HEAD')) {
      return { status: 200, headers: { 'content-type': file.contentType }, body: file.bytes };
    }
    const route = path.startsWith(`${API}/`) ? path.slice(API.length + 1) : '';
    // Own routes only: `constructor` and the like are not endpoints.
    const handler =
      record.method === 'POST' && Object.hasOwn(this.#routes, route) ? this.#routes[route] : undefined;
    if (!handler) return errorAnswer(404, 'NOT_FOUND', `Cannot ${record.method} ${path}`, path, now);

    // As in NestJS: the throttler guard, then the auth guard, then the validation pipe.
    const limited = this.#rateLimit(path, now);
    if (limited) return limited;
    if (!route.startsWith('auth/')) {
      const refused = this.#tokens.refusal(record.headers.authorization, now);
      if (refused) return errorAnswer(401, 'UNAUTHORIZED', refused, path, now);
    }
    const ctx: Context = { path, now, parsed };
    if (route.startsWith('upload/')) return handler(ctx, {});
    if (parsed.badJson) return this.#bad(ctx, 'Invalid JSON body');
    const messages = validateBody(route, parsed.json);
    if (messages.length > 0) return this.#bad(ctx, messages.join(', '));
    return handler(ctx, isRecord(parsed.json) ? parsed.json : {});
  }

  #bad(ctx: Context, info: string, code = 'BAD_REQUEST'): Answer {
    return errorAnswer(400, code, info, ctx.path, ctx.now);
  }

  #ok(data: unknown): Answer {
    return dataAnswer(this.#successStatus, data);
  }

  #rateLimit(path: string, now: number): Answer | undefined {
    const isUpload = path.startsWith(`${UPLOAD_PREFIX}/`);
    const windows = [this.#general, isUpload ? this.#upload : undefined].filter(
      (w): w is RateWindow => w !== undefined,
    );
    let waitMs: number | undefined;
    for (const window of windows) {
      const blocked = window.blockedForMs(now);
      if (blocked !== undefined) waitMs = Math.max(waitMs ?? 0, blocked);
    }
    if (waitMs !== undefined) {
      return tooManyRequestsAnswer(path, now, this.#retryAfter ? Math.ceil(waitMs / 1000) : undefined);
    }
    for (const window of windows) window.record(now);
    return undefined;
  }

  #token(ctx: Context, b: Record<string, unknown>): Answer {
    if (b.api_key !== this.apiKey || b.api_secret !== this.apiSecret) {
      return errorAnswer(401, 'UNAUTHORIZED', 'Invalid api key or api secret', ctx.path, ctx.now);
    }
    return this.#ok(this.issueTokenPair());
  }

  #refresh(ctx: Context, b: Record<string, unknown>): Answer {
    const pair = this.#tokens.refresh(String(b.refresh_token), ctx.now);
    if (pair) return this.#ok(pair);
    return errorAnswer(401, 'UNAUTHORIZED', 'Invalid or expired refresh token', ctx.path, ctx.now);
  }

  #greeting(ctx: Context, b: Record<string, unknown>): Answer {
    const user_id = String(b.user_id);
    if (!this.greeting) return errorAnswer(404, 'NOT_FOUND', 'Account provider not found', ctx.path, ctx.now);
    if (this.knownUsers && !this.knownUsers.has(user_id)) {
      return errorAnswer(404, 'NOT_FOUND', 'User not found', ctx.path, ctx.now);
    }
    const greeting = structuredClone(this.greeting);
    this.#deliver(ctx, {
      endpoint: 'sendGreeting',
      target: 'user',
      user_ids: [user_id],
      items: greeting.data,
    });
    return this.#ok(greeting);
  }

  #sendOne(
    ctx: Context,
    endpoint: DeliveryEndpoint,
    b: Record<string, unknown>,
    item: Record<string, unknown>,
  ): Answer {
    this.#deliver(ctx, { endpoint, target: 'user', user_ids: [String(b.user_id)], items: [item] });
    return this.#ok('success');
  }

  #sendVideo(ctx: Context, b: Record<string, unknown>): Answer {
    const ticket_id = String(b.ticket_id);
    const problem = this.#media.ticketProblem(ticket_id, ctx.now);
    if (problem === 'unknown') {
      return errorAnswer(404, 'NOT_FOUND', 'Video ticket not found', ctx.path, ctx.now);
    }
    if (problem === 'converting') return this.#bad(ctx, CONVERTING);
    return this.#sendOne(ctx, 'sendVideo', b, { type: 'video', msg: ticket_id });
  }

  #broadcast(ctx: Context, endpoint: DeliveryEndpoint, b: Record<string, unknown>): Answer {
    if (ctx.now < this.#jobEndsAt) {
      return this.#bad(ctx, 'A broadcast job is currently in progress', 'JOB_BUSY');
    }
    this.#jobEndsAt = ctx.now + this.#jobMs;
    const items = (b.items as Record<string, unknown>[]).map((item) => ({ ...item }));
    // Spec "States": a video item whose ticket is not ready makes the job fail when it runs.
    const failure = items
      .filter((item) => item.type === 'video' && typeof item.msg === 'string')
      .map((item) => this.#media.ticketProblem(item.msg as string, ctx.now))
      .find((problem) => problem !== undefined);
    const base = {
      endpoint,
      items,
      ...(failure ? { failure: failure === 'unknown' ? 'Video ticket not found' : CONVERTING } : {}),
    };
    const target = b.target as 'all' | 'selected' | 'single' | undefined;
    const named = target && target !== 'all' ? (b.user_ids as unknown[]).map(String) : [];
    const delivery = this.#deliver(ctx, {
      ...base,
      target:
        endpoint === 'broadcast'
          ? (target ?? 'all')
          : endpoint === 'broadcastToGroup'
            ? 'group'
            : 'member-session',
      user_ids: named,
      ...(present(b.account_provider_group_id)
        ? { account_provider_group_id: String(b.account_provider_group_id) }
        : {}),
      ...(present(b.member_group_broadcast_id)
        ? { member_group_broadcast_id: String(b.member_group_broadcast_id) }
        : {}),
    });
    const at = formatTimestamp(ctx.now);
    delivery.record = {
      id: delivery.id,
      data: items,
      broadcast_at: at,
      created_at: at,
      estimate_time_detail: { total_job_time_minutes: this.#jobMs / 60_000 },
    };
    return this.#ok(structuredClone(delivery.record));
  }

  #deliver(ctx: Context, delivery: Omit<Delivery, 'id' | 'path' | 'at' | 'recipients'>): Delivery {
    const seen = () => usersSeen(this.deliveries);
    const recipients = recipientsOf(delivery, this.members, this.knownUsers, seen);
    const entry: Delivery = { id: randomUUID(), path: ctx.path, at: ctx.now, ...delivery, recipients };
    this.deliveries.push(entry);
    return entry;
  }

  #uploadFile(ctx: Context, kind: UploadKind): Answer {
    const { form, badForm } = ctx.parsed;
    if (badForm) return this.#bad(ctx, 'Malformed multipart body');
    if (!form) return this.#bad(ctx, 'Expected a multipart/form-data body');
    const outcome = this.#media.upload(kind, form, ctx.now, this.publicUrl ?? 'http://localhost');
    if ('ok' in outcome) return this.#ok(outcome.ok);
    if (outcome.topLevel) return topLevelErrorAnswer(400, 'BAD_REQUEST', outcome.refused);
    return this.#bad(ctx, outcome.refused);
  }
}

/**
 * Creates the transport-independent fake: hand it to `createMswHandlers` (`oa-messaging/testing/msw`), or
 * call `handle` yourself.
 */
export function createFakeOA(options: FakeOAOptions = {}): FakeOA {
  return new FakeOA(options);
}
