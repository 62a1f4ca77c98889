/**
 * The `hooks` option's shape (the client's and a call's): the public types of the one seam around a
 * call, and its check. core/hooks.ts runs them.
 */
import type { OAError } from '../errors.js';

/**
 * What every hook is told of the call it runs for. Nothing secret: no token, no api secret, and no
 * params for the token endpoints. Read it; changing it changes nothing of what is sent.
 */
export interface OACallState {
  /** The client method, e.g. `sendText` (as the client's events name it). */
  readonly endpoint: string;
  /** Always `POST` in this API. */
  readonly method: 'POST';
  /** The endpoint path, e.g. `/api/v2/public/webhook/broadcast-message`. */
  readonly path: string;
  /**
   * The call's params as checked (e.g. `{ user_id, msg }`); `undefined` for uploads and for the token
   * endpoints (`generateToken`, `refreshToken`), whose params are credentials.
   */
  readonly params: unknown;
  /**
   * `true` for the client's own token renewal (a login or refresh that waiting calls share, which no
   * caller made): only the client's hooks run for it, never a call's.
   */
  readonly renewal: boolean;
}

/** What a per-attempt hook is told: the call, and which attempt is about to leave or has failed. */
export interface OAAttemptState extends OACallState {
  /** 1 for the first attempt, 2 after one retry... */
  readonly attempt: number;
}

/** What a `notDelivered` hook is told: the attempt, and the failure that says it did not deliver. */
export interface OANotDeliveredState extends OAAttemptState {
  /** The attempt's failure: a 429, `JOB_BUSY`, a 401, another 4xx verdict, or a request never sent. */
  readonly error: OAError;
}

/**
 * Runs around the whole call (all its attempts, waits and retries), like a middleware: it calls
 * `next()` once to make the call, and the call settles as `next()` did, whatever the hook returns; so
 * a hook observes and wraps (a span, a timer, a log line) but cannot change the outcome or send twice.
 * A hook that fails or settles before calling `next()` fails the call with `OAConnectionError`
 * (nothing was sent, `deliveryUnknown: false`; `cause`: the hook's error); a second `next()` rejects
 * the same way and sends nothing; its failure after `next()` is logged (`warn`) and changes nothing.
 */
export type OAAroundCallHook = (state: OACallState, next: () => Promise<unknown>) => Promise<unknown>;

/**
 * Runs once per attempt just before its request leaves (after the rate-limit slot and the access
 * token). A promise it returns is awaited, bounded by the call's deadline, `signal` and `close()`. If it
 * throws or rejects, the request does not leave: the call fails with `OAConnectionError`
 * (`deliveryUnknown: false`, `cause`: the hook's error).
 */
export type OABeforeSendHook = (state: OAAttemptState) => unknown;

/**
 * Runs when an attempt that reached its `beforeSend` hooks certainly did not deliver (the API answered
 * that it did not act: 429, `JOB_BUSY`, 401, another 4xx such as a video still converting; or the
 * request was never sent), before the call waits to try again or rejects. Not run when the attempt
 * succeeded or may have been acted on (a 5xx, a reset or a timeout after the request left). A promise
 * it returns is awaited, bounded like `beforeSend`; its failure is logged (`warn`) and changes nothing
 * of the call.
 */
export type OANotDeliveredHook = (state: OANotDeliveredState) => unknown;

/**
 * Hooks around a call (the client's `hooks` option, and a call's own in `RequestOptions`), each an
 * array run in order: the client's first, then the call's.
 * @example
 * new OAClient({ hooks: { beforeSend: [({ endpoint, attempt }) => log.debug(`${endpoint} #${attempt}`)] } })
 */
export interface OAHooks {
  /**
   * Around the whole call; the first is outermost (the client's own tracing, when it traces, is
   * outside them all).
   * @default []
   */
  aroundCall?: readonly OAAroundCallHook[] | undefined;
  /**
   * Just before each attempt's request leaves; one that fails keeps it from leaving.
   * @default []
   */
  beforeSend?: readonly OABeforeSendHook[] | undefined;
  /**
   * After an attempt that certainly did not deliver.
   * @default []
   */
  notDelivered?: readonly OANotDeliveredHook[] | undefined;
}

/** What a `hooks` option must be (the client's or a call's): the rule its error message states. */
export const HOOKS_RULE = 'must be { aroundCall?, beforeSend?, notDelivered? }: arrays of functions';

/** Whether `value` can be a `hooks` option: {@link HOOKS_RULE}. */
export const isHooks = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  Object.entries(value).every(
    ([name, list]) =>
      /^(aroundCall|beforeSend|notDelivered)$/.test(name) &&
      (list === undefined || (Array.isArray(list) && list.every((hook) => typeof hook === 'function'))),
  );
