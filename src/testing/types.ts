/** Public types of `oa-messaging/testing`: options of the fake, what it records, faults. */

/** The api key the fake accepts unless told otherwise. */
export const TEST_API_KEY = 'test-api-key';
/** The api secret the fake accepts unless told otherwise. */
export const TEST_API_SECRET = 'test-api-secret';
/** The fake's OA account username unless told otherwise (also `sendInboundMessage`'s default). */
export const TEST_USERNAME = 'oa_account';

/** One rate-limit window: at most `max` requests in any `windowMs`. */
export interface RateWindowOptions {
  /** At most this many requests... */
  max: number;
  /** ...in any span of this many ms. */
  windowMs: number;
}

/** The two request-rate limits of the spec ("Limits"). */
export interface RateLimitOptions {
  /**
   * Every API request (both auth endpoints included).
   * @default { max: 200, windowMs: 60_000 }
   */
  general?: RateWindowOptions | undefined;
  /**
   * Paths under `/api/v2/public/upload`; an upload counts against `general` as well.
   * @default { max: 20, windowMs: 60_000 }
   */
  upload?: RateWindowOptions | undefined;
  /**
   * `sliding`: at most `max` accepted requests in any span of `windowMs`. `fixed`: NestJS-throttler-style
   * windows, each starting at the first request after the previous one ended. Refused requests do not
   * use up the limit in either mode.
   * @default 'sliding'
   */
  mode?: 'sliding' | 'fixed' | undefined;
}

/** The greeting configured in the OA (endpoint 3's `data`). */
export interface GreetingRecord {
  /** Its id. */
  id: string;
  /** Its title. */
  title: string;
  /** Its slug. */
  slug: string;
  /** The messages it sends. */
  data: {
    /** The item type, e.g. `message`. */
    type: string;
    /** The item's content. */
    msg: string;
  }[];
}

/**
 * Who receives the broadcasts that name no users: the OA's users (`target: 'all'`), the members of
 * each group and of each member-group session. The API keeps these itself; the fake is told them.
 */
export interface FakeMembers {
  /**
   * The recipients of `target: 'all'`.
   * @default the fake's `knownUsers` when set, else every user the fake has delivered to so far
   */
  all?: string[] | undefined;
  /** `account_provider_group_id` -> the group's members. */
  groups?: Record<string, string[]> | undefined;
  /** `member_group_broadcast_id` -> the session's members. */
  memberSessions?: Record<string, string[]> | undefined;
}

/**
 * One OA account of a fake that serves several (`FakeOAOptions.accounts`). The optional fields
 * override the fake's shared option of the same name for this account.
 */
export interface FakeAccountOptions {
  /** The OA account's username: the `username` of the inbound events it receives. */
  username: string;
  /** The api key that logs in to this account (endpoint 1); unique among the accounts. */
  apiKey: string;
  /** Its api secret. */
  apiSecret: string;
  /** @default the fake's `greeting` */
  greeting?: GreetingRecord | null | undefined;
  /** @default the fake's `knownUsers` */
  knownUsers?: Iterable<string> | undefined;
  /** @default the fake's `members` (each account gets its own copy) */
  members?: FakeMembers | undefined;
}

/** Options of the fake core ({@link createFakeOA}) and of {@link createMockServer}. */
export interface FakeOAOptions {
  /** @default TEST_API_KEY (`'test-api-key'`) */
  apiKey?: string | undefined;
  /** @default TEST_API_SECRET (`'test-api-secret'`) */
  apiSecret?: string | undefined;
  /**
   * The OA account's username: the `username` of the inbound events `mock.say` posts.
   * @default TEST_USERNAME (`'oa_account'`)
   */
  username?: string | undefined;
  /**
   * Several OA accounts behind one base URL, as the real service serves them: each api key logs in to
   * its own account (endpoint 1), and every later request acts on the account its token (or refresh
   * token) belongs to. Each account has its own tokens, rate-limit windows (each the size `rateLimit`
   * says), members, greeting, uploads and video tickets, broadcast job, faults and records: see
   * `FakeOA.account(username)`. The fake itself is the first account (its `requests`, `deliveries`,
   * `injectFault` ... are that account's), except `reset()` and `releaseHungRequests()`, which act on
   * every account. Not together with `apiKey`, `apiSecret` or `username`.
   * @default one account, of `apiKey`, `apiSecret` and `username`
   */
  accounts?: readonly FakeAccountOptions[] | undefined;
  /**
   * Lifetime of an access token (an HS256 JWT with `iat` and `exp`); `expires_in` is derived from it
   * (`'1h'` for the default).
   * @default 3_600_000 (1 hour, as the spec shows)
   */
  tokenLifetimeMs?: number | undefined;
  /**
   * Lifetime of a refresh token (opaque). The spec does not show it.
   * @default 604_800_000 (7 days)
   */
  refreshTokenLifetimeMs?: number | undefined;
  /**
   * A refresh token works once: refreshing returns a new one and the used one is refused afterwards.
   * `false` returns the same refresh token again.
   * @default true
   */
  rotateRefreshTokens?: boolean | undefined;
  /** Both request-rate limits, or `false` for none. @default the spec's 200/min and 20/min uploads */
  rateLimit?: RateLimitOptions | false | undefined;
  /**
   * Adds `Retry-After` (seconds until a request would be accepted) to 429 answers. The spec does not
   * show the header, so it is off by default.
   * @default false
   */
  retryAfter?: boolean | undefined;
  /** How long a video ticket stays in convert status after its upload. @default 2000 */
  transcodeMs?: number | undefined;
  /**
   * How long the job of a mass, group or member-session broadcast runs; another of those broadcasts in
   * that time answers 400 `JOB_BUSY`. Also gives `estimate_time_detail.total_job_time_minutes`.
   * @default 0
   */
  broadcastJobMs?: number | undefined;
  /**
   * The greeting endpoint 3 sends. `null`: the account provider has none, and endpoint 3 answers 404
   * `NOT_FOUND`.
   * @default a fixed greeting (`DEFAULT_GREETING`)
   */
  greeting?: GreetingRecord | null | undefined;
  /**
   * The users the account knows. When set, a greeting to any other `user_id` answers 404 `NOT_FOUND`.
   * Other endpoints do not check users (the spec shows no such error).
   * @default undefined (every user is known)
   */
  knownUsers?: Iterable<string> | undefined;
  /**
   * Who the broadcasts that name no users reach (`all`, groups, member sessions): each delivery's
   * `recipients`, and the conversations of the web inbox. `DEMO_MEMBERS` is a small ready-made one.
   * May be changed later through `members`.
   * @default none: a group or member-session broadcast reaches nobody
   */
  members?: FakeMembers | undefined;
  /** Largest accepted file per upload kind, in bytes. @default the spec's 5 MB, 100 MB, 100 MB */
  maxFileBytes?:
    | {
        /** For images. */
        image?: number | undefined;
        /** For videos. */
        video?: number | undefined;
        /** For audio files. */
        audio?: number | undefined;
      }
    | undefined;
  /**
   * HTTP status of successful answers. The spec does not show it; 201 is what a NestJS `@Post()` sends.
   * @default 201
   */
  successStatus?: number | undefined;
  /**
   * Base of the URLs of uploaded files (`url`, `audio_url`). Set by {@link createMockServer} and
   * `createMswHandlers` (`oa-messaging/testing/msw`) when not given.
   */
  publicUrl?: string | undefined;
  /** The clock, in ms since the epoch. @default Date.now */
  now?: (() => number) | undefined;
}

/** One part of a multipart request, as recorded. */
export interface RecordedPart {
  /** The form field name. */
  field: string;
  /** Present for file parts. */
  filename?: string;
  /** The content type sent with it. */
  contentType?: string;
  /** Its size in bytes. */
  size: number;
  /** Hex SHA-256 of the part's bytes. */
  sha256: string;
}

/** One request the fake received. */
export interface RecordedRequest {
  /** The HTTP method. */
  method: string;
  /** The path, without query. */
  path: string;
  /** The query string with its `?`, or `''`. */
  query: string;
  /** Lower-case header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /**
   * The parsed JSON body; the text when the body is not JSON; `undefined` when empty or multipart.
   */
  body: unknown;
  /** The parts of a multipart body. */
  parts?: RecordedPart[];
  /** Bytes of the body. */
  size: number;
  /**
   * The status of the answer: the one sent, or for `reset-after-processing` the one that would have
   * been sent. `undefined` while in flight, and for `reset-before-processing` and `hang`.
   */
  status: number | undefined;
  /** What the client got: an answer, a reset connection, or nothing (`hang`). */
  outcome: 'pending' | 'answered' | 'reset' | 'hang';
  /** The `code` of an error answer (`TOO_MANY_REQUESTS` for a 429); `undefined` for a success. */
  code?: string;
  /** The `info` of an error answer, e.g. `Video is in convert status`; `undefined` for a success. */
  info?: string;
  /** Milliseconds from its arrival at the fake to its answer (or reset), by the real clock. */
  durationMs?: number;
  /** The injected fault that hit this request. */
  fault?: FaultKind;
  /** When it arrived, ms since the epoch (the fake's clock). */
  at: number;
}

/** The SDK method name of each sending endpoint. */
export type DeliveryEndpoint =
  | 'sendGreeting'
  | 'sendImage'
  | 'sendText'
  | 'broadcast'
  | 'broadcastToGroup'
  | 'broadcastToMemberSession'
  | 'sendVideo'
  | 'sendAudio';

/** One message (or broadcast) the fake accepted for delivery. */
export interface Delivery {
  /** The broadcast record id, or a generated id for single-user sends. */
  id: string;
  /** The client method that made it, e.g. `sendText`. */
  endpoint: DeliveryEndpoint;
  /** The endpoint path. */
  path: string;
  /** `user` for the single-user endpoints; the broadcast target otherwise. */
  target: 'user' | 'all' | 'selected' | 'single' | 'group' | 'member-session';
  /** Recipients named in the request (empty for `all`, groups and member sessions). */
  user_ids: string[];
  /**
   * Whom it reached: the users named, or for `all`, a group or a member session, their members
   * (from the fake's `members`) when it was accepted.
   */
  recipients: string[];
  /** The group, for a group broadcast. */
  account_provider_group_id?: string;
  /** The member-group session, for a session broadcast. */
  member_group_broadcast_id?: string;
  /**
   * What was delivered, as message items; single-user sends are shown as the equivalent item (e.g. a
   * text as `{ type: 'message', msg, desc }`), a greeting as its `data`.
   */
  items: Record<string, unknown>[];
  /**
   * Set when the broadcast was accepted but its job failed (spec: a `video` item whose ticket is still
   * converting makes the job fail).
   */
  failure?: string;
  /** The broadcast record answered (`id`, `data`, `broadcast_at`, `created_at`, `estimate_time_detail`). */
  record?: Record<string, unknown>;
  /** When it was accepted, ms since the epoch. */
  at: number;
}

/** A file the fake stored. */
export interface StoredUpload {
  /** The kind of fault. */
  kind: 'image' | 'video' | 'audio';
  /** The file name sent with it. */
  filename: string;
  /** The content type sent with it. */
  contentType: string;
  /** Its size in bytes. */
  size: number;
  /** Hex SHA-256 of its bytes. */
  sha256: string;
  /** The bytes. */
  bytes: Uint8Array;
  /** The upload's `data` as answered. */
  result: Record<string, unknown>;
  /** When, in ms since 1970. */
  at: number;
}

/** A fault to inject into the next matching request(s). */
export type Fault =
  /**
   * An error answer without processing. By default 500 `INTERNAL_SERVER_ERROR` in the spec's layout; a
   * string `body` is sent as is (`text/html` unless `headers` say otherwise), an object as JSON.
   */
  | {
      /** The kind of fault. */
      kind: 'error';
      /** @default 500 */
      status?: number | undefined;
      /** The error code to answer with. */
      code?: string | undefined;
      /** The error text to answer with. */
      info?: string | undefined;
      /** The body. */
      body?: string | Record<string, unknown> | undefined;
      /** The headers. */
      headers?: Record<string, string> | undefined;
    }
  /** A 429 in the spec's layout without processing; `Retry-After` when `retryAfterSeconds` is given. */
  | {
      /** The kind of fault. */
      kind: 'rate-limit';
      /** The `Retry-After` to answer with. */
      retryAfterSeconds?: number | undefined;
    }
  /** The request is processed (recorded, delivered), then the connection is reset without an answer. */
  | {
      /** The kind of fault. */
      kind: 'reset-after-processing';
    }
  /** The connection is reset before anything is processed. */
  | {
      /** The kind of fault. */
      kind: 'reset-before-processing';
    }
  /** No answer ever: until the client gives up, or the fake is reset or closed. */
  | {
      /** The kind of fault. */
      kind: 'hang';
    }
  /**
   * A slow answer: the request waits `delayMs` (cut short when the fake is reset or closed), then is
   * processed and answered as usual.
   */
  | {
      /** The kind of fault. */
      kind: 'delay';
      /** @default 2000 */
      delayMs?: number | undefined;
    };

/** The kind of a {@link Fault}; also accepted by `injectFault` as a shorthand. */
export type FaultKind = Fault['kind'];

/** Which requests a fault hits, and how many. */
export interface FaultOptions {
  /** @default 1 (use `Infinity` for every matching request) */
  times?: number | undefined;
  /**
   * A string matches a path equal to it or ending with it (so `'/webhook/broadcast-message'` works); a
   * RegExp is tested against the path.
   * @default every API request except the two auth endpoints and the uploaded files
   */
  path?: string | RegExp | undefined;
  /** @default any method */
  method?: string | undefined;
}

/** A fault that was injected. */
export interface InjectedFault {
  /** The fault. */
  readonly fault: Fault;
  /** Which requests it hits, as given. */
  readonly options: FaultOptions;
  /** How many more requests it will hit. */
  readonly remaining: number;
  /** Stops it before it is used up. */
  remove(): void;
}

/** A request given to the fake core, whatever the transport. */
export interface FakeRequest {
  /** The HTTP method. */
  method: string;
  /** Path and query, e.g. `/api/v2/public/auth/token`; an absolute URL is accepted too. */
  url: string;
  /** The headers. */
  headers: Headers | Record<string, string | string[] | undefined>;
  /** The body. */
  body: Uint8Array;
  /**
   * When the request's headers arrived, on the fake's clock ({@link FakeOA.now}). The request is
   * counted against the rate limits (and its token checked) at that moment, as a server that throttles
   * before it reads the body would. @default the time `handle` is called
   */
  receivedAt?: number;
}

/** What the transport must do with a request: answer it, reset its connection, or wait. */
export type FakeOutcome =
  | {
      /** Answer with this status, headers and body. */
      type: 'respond';
      /** The HTTP status. */
      status: number;
      /** The answer's headers. */
      headers: Record<string, string>;
      /** The answer's body. */
      body: Uint8Array;
    }
  | {
      /** Drop the connection. */
      type: 'reset';
    }
  /** Answer nothing; `released` resolves when the fake is reset or closed (then drop the connection). */
  | {
      /** Answer nothing. */
      type: 'hang';
      /** Settles when the fake is reset or closed. */
      released: Promise<void>;
    };
