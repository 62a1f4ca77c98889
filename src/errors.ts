/**
 * The error hierarchy of the SDK. Every error the SDK throws is an {@link OAError}; errors that come
 * from an answer of the API keep `status`, `code`, `info`, `path`, `timestamp` and the raw `body`.
 */

/** One problem found by a schema, with the path of the offending field. */
export interface OAValidationIssue {
  /** Where the problem is, e.g. `['items', 2, 'link']`. Empty for the value as a whole. */
  path: (string | number)[];
  /** What is wrong, in words. */
  message: string;
}

/**
 * How the SDK's retry loop treats a failure ("Retries" in docs/reliability.md), fixed when the error is made:
 * - `rejected`: the API did not act and asked to wait (429, `JOB_BUSY`);
 * - `unauthorized`: 401, the access token was refused (one renewal, one replay);
 * - `not_sent`: the request never left (a refused connection, a shared limiter or token store that
 *   could not be reached): safe to send again, sends included;
 * - `outcome_unknown`: the request may have been acted on (a reset or timeout after it left, a 5xx);
 * - `final`: never retried (a 4xx verdict, an abort, a closed client, a deadline that ran out).
 */
export type OARetryClass = 'rejected' | 'unauthorized' | 'not_sent' | 'outcome_unknown' | 'final';

/** The retry classes an error's maker may set where its class alone does not say (`failure` option). */
export type OAFailureKind = Extract<OARetryClass, 'not_sent' | 'final'>;

/** Options shared by every error constructor. */
export interface OAErrorOptions {
  /** The error that caused this one. */
  cause?: unknown;
  /** See {@link OAError.deliveryUnknown}. */
  deliveryUnknown?: boolean | undefined;
  /**
   * How the retry loop treats this failure; unset, its class decides (see "Retries" in docs/reliability.md).
   * A coordination (`coordination` option) marks a Redis failure `not_sent` and its own closing `final`.
   */
  failure?: OAFailureKind | undefined;
}

const OA_ERROR_BRAND = Symbol.for('oa-messaging.error');

/** What the message of an error with `deliveryUnknown` ends with, whoever made it. */
const DELIVERY_UNKNOWN_NOTE = 'may have been delivered: check before sending again';

/** `message`, saying that the send may have been delivered when it may have (said once). */
function withDeliveryNote(message: string, deliveryUnknown: boolean | undefined): string {
  return deliveryUnknown && !message.includes(DELIVERY_UNKNOWN_NOTE)
    ? `${message}; ${DELIVERY_UNKNOWN_NOTE}`
    : message;
}

/** The base class of every error thrown by the SDK. */
export class OAError extends Error {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAError';
  /**
   * `true` when a send or broadcast may have reached the API and been delivered even though the call
   * failed (a reset, a timeout, a 5xx or an abort after the request went out). Such a call is never
   * retried by the SDK: check before sending again. Its message then ends with "may have been
   * delivered: check before sending again".
   */
  readonly deliveryUnknown: boolean;
  /**
   * How the SDK's retry loop treats this failure: what its class stands for, unless its maker said
   * (`failure`). Fixed here, never changed after (read-only, not enumerable, so not in `toJSON()`).
   */
  declare readonly retryClass: OARetryClass;

  constructor(message: string, options: OAErrorOptions = {}) {
    // The flag alone is easy to miss in a log line: the message says it too.
    super(
      withDeliveryNote(message, options.deliveryUnknown),
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.deliveryUnknown = options.deliveryUnknown ?? false;
    Object.defineProperty(this, OA_ERROR_BRAND, { value: true });
    Object.defineProperty(this, 'retryClass', { value: options.failure ?? retryClassOf(this) });
  }

  /** What `JSON.stringify(err)` shows: the error's own safe fields, never a request's secrets. */
  toJSON(): Record<string, unknown> {
    const out: Record<string, unknown> = { name: this.name, message: this.message };
    for (const [key, value] of Object.entries(this)) {
      if (key !== 'cause') out[key] = value;
    }
    return out;
  }
}

/** What an error's class stands for; called once, by the constructor. */
function retryClassOf(error: OAError): OARetryClass {
  if (error instanceof OARateLimitError || error instanceof OAJobBusyError) return 'rejected';
  if (error instanceof OAUnauthorizedError) return 'unauthorized';
  if (error instanceof OAInternalServerError || error instanceof OAConnectionError) return 'outcome_unknown';
  return 'final';
}

/**
 * The same error (class, fields, cause, stack) with another retry class or message: a new object, so
 * that an error shared by many calls (a token renewal's) is never changed under the others.
 */
export function reissued<E extends OAError>(
  error: E,
  changes: { retryClass?: OARetryClass; message?: string },
): E {
  const descriptors: PropertyDescriptorMap = Object.getOwnPropertyDescriptors(error);
  if (changes.retryClass !== undefined) descriptors.retryClass = { value: changes.retryClass };
  if (changes.message !== undefined) {
    descriptors.message = { value: changes.message, writable: true, configurable: true };
  }
  return Object.create(Object.getPrototypeOf(error), descriptors) as E;
}

/** `true` for any error thrown by this SDK, even one from another copy of the package (another realm). */
export function isOAError(value: unknown): value is OAError {
  return (
    typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[OA_ERROR_BRAND] === true
  );
}

/** The client was configured in a way that cannot work (a missing key, an insecure base URL). */
export class OAConfigError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAConfigError';
}

/** Input failed its schema; nothing was sent. */
export class OAValidationError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAValidationError';
  /** Every problem found, each with the path of the field. */
  readonly issues: OAValidationIssue[];

  constructor(message: string, issues: OAValidationIssue[] = [], options: OAErrorOptions = {}) {
    super(message, options);
    this.issues = issues;
  }
}

/** What the SDK knows of an error answer. */
export interface OAApiErrorDetails {
  /** HTTP status of the answer. */
  status: number;
  /** The API's error code (`BAD_REQUEST`, `JOB_BUSY`, ...), when the answer had one. */
  code: string | undefined;
  /** The API's details text, or the start of a non-JSON body. */
  info: string | undefined;
  /** The path the API reports (or the path that was called). */
  path: string;
  /** The API's `timestamp` (`YYYY-MM-DD HH:mm:ss`), when present. */
  timestamp: string | undefined;
  /** The parsed JSON body, or the body text when it was not JSON. */
  body: unknown;
  /** The `x-request-id` or similar header, when the server sent one. */
  requestId?: string | undefined;
}

/** The API answered with an error status. Subclasses narrow it by code or status. */
export class OAApiError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAApiError';
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The API's error code, e.g. `BAD_REQUEST` or `JOB_BUSY`. */
  readonly code: string | undefined;
  /** The API's explanation, when it gave one. */
  readonly info: string | undefined;
  /** The endpoint path, e.g. `/api/v2/public/webhook/broadcast-message`. */
  readonly path: string;
  /** When the API answered, as it said. */
  readonly timestamp: string | undefined;
  /** The answer's body (parsed JSON, else text), secrets removed. */
  readonly body: unknown;
  /** The answer's `x-request-id`, for a support request. */
  readonly requestId: string | undefined;

  constructor(message: string, details: OAApiErrorDetails, options: OAErrorOptions = {}) {
    super(message, options);
    this.status = details.status;
    this.code = details.code;
    this.info = details.info;
    this.path = details.path;
    this.timestamp = details.timestamp;
    this.body = details.body;
    this.requestId = details.requestId;
  }
}

/** 400 `BAD_REQUEST`: the API refused the request's data. */
export class OABadRequestError extends OAApiError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OABadRequestError';
}

/** 400 `JOB_BUSY`: a broadcast job is already running for the account. */
export class OAJobBusyError extends OAApiError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAJobBusyError';
}

/** 401: credentials, access token or refresh token refused. */
export class OAUnauthorizedError extends OAApiError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAUnauthorizedError';
}

/** 404 `NOT_FOUND`: e.g. the account provider of the greeting. */
export class OANotFoundError extends OAApiError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OANotFoundError';
}

/** 429: over the API's request rate. */
export class OARateLimitError extends OAApiError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OARateLimitError';
  /** How long the server asked to wait (`Retry-After` or `retry-after-ms`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    details: OAApiErrorDetails & { retryAfterMs: number | undefined },
    options: OAErrorOptions = {},
  ) {
    super(message, details, options);
    this.retryAfterMs = details.retryAfterMs;
  }
}

/** 5xx: the API (or a proxy in front of it) failed. */
export class OAInternalServerError extends OAApiError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAInternalServerError';
}

/** No usable answer: the connection failed, was reset, or the body could not be read. */
export class OAConnectionError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAConnectionError';
}

/** An attempt took longer than `timeoutMs`. */
export class OATimeoutError extends OAConnectionError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OATimeoutError';
}

/** The caller's `AbortSignal` fired. `cause` is the signal's reason. */
export class OAAbortError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAAbortError';
}

/**
 * Your credentials store (a `credentials` resolver of `createAccounts`, or a client's `credentials`
 * provider) threw, or did not answer within `credentialsTimeoutMs`: an outage of the store, not a
 * verdict on the call. Nothing was sent (`deliveryUnknown: false`); the store is asked again at the
 * next call, and an outbox job that meets it waits and is tried again (it does not fail). `cause` is
 * the store's own error, when it threw.
 */
export class OACredentialsError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OACredentialsError';
  /** The account whose credentials could not be read, when the client has one. */
  readonly account: string | undefined;

  constructor(message: string, account: string | undefined, options: OAErrorOptions = {}) {
    super(message, { failure: 'not_sent', ...options });
    this.account = account;
  }
}

/**
 * A worker of an inbox with `order: 'sender'` no longer holds the sender whose event it was handling:
 * it stalled (paused, starved of CPU) past `lockDurationMs`, and another worker may have taken the
 * sender over. Thrown by a bot reply (nothing sent) and by the session's save (nothing written), so
 * that the stale handler stops before its next side effect; the inbox hands the event to the holder.
 */
export class OALockLostError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OALockLostError';
}

/** A 2xx answer whose body does not match the documented shape. The request itself succeeded. */
export class OAResponseValidationError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAResponseValidationError';
  /** The HTTP status of the answer. */
  readonly status: number;
  /** The endpoint path, e.g. `/api/v2/public/webhook/broadcast-message`. */
  readonly path: string;
  /** The answer's body (parsed JSON, else text), secrets removed. */
  readonly body: unknown;
  /** What did not match, each with its path. */
  readonly issues: OAValidationIssue[];

  constructor(
    message: string,
    details: { status: number; path: string; body: unknown; issues: OAValidationIssue[] },
    options: OAErrorOptions = {},
  ) {
    super(message, options);
    this.status = details.status;
    this.path = details.path;
    this.body = details.body;
    this.issues = details.issues;
  }
}

/** The video ticket was still converting when the wait ran out. */
export class OATranscodeTimeoutError extends OAError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OATranscodeTimeoutError';
  /** The video ticket. */
  readonly ticket_id: string;

  constructor(message: string, ticket_id: string, options: OAErrorOptions = {}) {
    super(message, options);
    this.ticket_id = ticket_id;
  }
}

/**
 * A broadcast (or `waitForVideo`) holds a video ticket that is not known to be ready, and no probe user
 * was given to confirm it: nothing was sent. The API accepts a broadcast of a ticket still converting
 * and fails its job later, so the SDK will not broadcast a ticket it cannot vouch for.
 */
export class OAVideoNotConfirmedError extends OAConfigError {
  /** The class name, also across realms (see `isOAError`). */
  override name = 'OAVideoNotConfirmedError';
  /** The video ticket. */
  readonly ticket_id: string;

  constructor(message: string, ticket_id: string, options: OAErrorOptions = {}) {
    super(message, options);
    this.ticket_id = ticket_id;
  }
}

/** What {@link errorFromAnswer} needs of an error answer. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body text, secrets already removed. */
  text: string;
  /** The path that was called. */
  path: string;
  /** A send or broadcast: a 5xx leaves its delivery unknown. */
  isSend: boolean;
}

function header(headers: ErrorAnswer['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `retry-after-ms`, else `Retry-After` in seconds or as an HTTP date. */
function parseRetryAfterMs(headers: ErrorAnswer['headers'], now = Date.now()): number | undefined {
  const ms = Number.parseFloat(header(headers, 'retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = header(headers, 'retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (value.trim() !== '' && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A short readable excerpt of a non-JSON body, e.g. a proxy's HTML error page. */
function excerpt(text: string): string | undefined {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1];
  const plain = (title ?? text.replace(/<[^>]*>/g, ' ')).replace(/\s+/g, ' ').trim();
  if (!plain) return undefined;
  return plain.length > 200 ? `${plain.slice(0, 200)}...` : plain;
}

/**
 * Maps an error answer to its error class. The API shows two layouts, `{statusCode, data: {code, info}}`
 * and `{statusCode, code, info}`; a 429 carries a plain string in `data`; a proxy may answer with HTML.
 */
export function errorFromAnswer(answer: ErrorAnswer): OAApiError {
  let body: unknown = answer.text;
  try {
    body = answer.text ? JSON.parse(answer.text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  let code: string | undefined;
  let info: string | undefined;
  let path = answer.path;
  let timestamp: string | undefined;
  if (isRecord(body)) {
    const inner = isRecord(body.data) ? body.data : body;
    code = str(inner.code) ?? str(body.code);
    info = str(inner.info) ?? str(body.info) ?? str(body.data) ?? str(body.message);
    path = str(body.path) ?? path;
    timestamp = str(body.timestamp);
  } else if (typeof body === 'string') {
    info = excerpt(body);
  }
  const details: OAApiErrorDetails = {
    status: answer.status,
    code,
    info,
    path,
    timestamp,
    body,
    requestId: header(answer.headers, 'x-request-id'),
  };
  const message = `${answer.status}${code ? ` ${code}` : ''}${info ? `: ${info}` : ''} (POST ${answer.path})`;
  const { status } = answer;
  if (code === 'JOB_BUSY') return new OAJobBusyError(message, details);
  if (status === 400) return new OABadRequestError(message, details);
  if (status === 401) return new OAUnauthorizedError(message, details);
  if (status === 404) return new OANotFoundError(message, details);
  if (status === 429) {
    return new OARateLimitError(message, { ...details, retryAfterMs: parseRetryAfterMs(answer.headers) });
  }
  if (status >= 500) return new OAInternalServerError(message, details, { deliveryUnknown: answer.isSend });
  return new OAApiError(message, details);
}
