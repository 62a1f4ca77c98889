/** The send methods an outbox accepts, and the checks made before anything is stored. */
import type { OAClient } from '../client.js';
import { endpoints } from '../endpoints.js';
import { OAValidationError } from '../errors.js';
import { formatIssues, validate } from '../schemas/validate.js';

/** The client's send methods that an outbox can queue. */
export const OUTBOX_METHODS = [
  'sendText',
  'sendImage',
  'sendAudio',
  'sendVideo',
  'sendGreeting',
  'broadcast',
  'broadcastToGroup',
  'broadcastToMemberSession',
] as const;

/** One of {@link OUTBOX_METHODS}. */
export type OutboxMethod = (typeof OUTBOX_METHODS)[number];

/** The params `method` takes, as for the client's method of that name. */
export type OutboxParams<M extends OutboxMethod> = Parameters<OAClient[M]>[0];

/** How a job is added: the app's idempotency key, and when and in which order it is sent. */
export interface OutboxAddOptions {
  /**
   * The app's idempotency key (1 to 512 characters of well-formed text: no lone UTF-16 surrogate), e.g.
   * `order-123-shipped`: adding a key that is already known keeps its one job (see `retentionMs`).
   */
  key: string;
  /** Milliseconds to wait before the send may start (or `at`, not both). @default 0 */
  delay?: number | undefined;
  /**
   * When the send may start, at the earliest (or `delay`, not both): a date in the past means now.
   * Decided on Redis's clock (its `TIME`), not this machine's nor a worker's: a worker whose clock runs
   * fast does not send it early. `delay` counts from when Redis stores the job, on the same clock.
   */
  at?: Date | undefined;
  /**
   * 1 (first) to 2,097,152 (last); jobs without one go before any with one, as in BullMQ. Not with
   * `account`: an account's jobs go in turns, replies ahead of `bulk` ones.
   */
  priority?: number | undefined;
  /**
   * The account that sends it (an id of `createAccounts`), for a worker given `accounts`: keys are
   * unique per account (the same key in two accounts is two jobs), accounts with work take turns,
   * and each account's quota is used and never exceeded. Without it, the job is for a worker given
   * `client`, as before.
   * @default undefined (no account)
   */
  account?: string | undefined;
  /**
   * A campaign's send (with `account`): it yields to the same account's other jobs, so that a reply
   * queued during the campaign goes out next, and it leaves room in the account's quota.
   * @default false
   */
  bulk?: boolean | undefined;
  /**
   * An order group within the account (with `account`), e.g. the user a reply goes to: the account's
   * jobs with the same `orderGroup` are sent one at a time, in the order added. The next one starts only
   * once the one before it ended (`delivered`, `failed`, `unknown` or cancelled), whether that took a
   * retry, a paused account (a rotated secret) or a worker that died; until then it is `waiting` (or
   * `delayed`). A job added with `at` or `delay` holds the jobs of its group added after it until it is
   * sent. Jobs of different groups, and jobs without one, go as before, in turns and up to the account's
   * cap in flight at once. A key that is known keeps its one job and its place.
   * @default undefined (no order: the account's jobs may be sent at once, their order not kept)
   */
  orderGroup?: string | undefined;
}

/** One entry of `addMany`. */
export type OutboxEntry = {
  [M in OutboxMethod]: {
    /** The client method that sends it, e.g. `'sendText'`. */
    method: M;
    /** That method's params, checked before they are stored. */
    params: OutboxParams<M>;
  } & OutboxAddOptions;
}[OutboxMethod];

/**
 * An entry of `addMany` whose method TypeScript knows only as a string: one built in a variable
 * (`users.map((u) => ({ method: 'sendText', params, key }))`), where the literal `'sendText'` widens
 * to `string`. Its params must still be those of some send method, and a key is still needed; its
 * method, and its params against that method, are checked when it is added (an unknown method is an
 * `OAValidationError`, nothing stored). Entries written inline are held to {@link OutboxEntry}.
 */
export type OutboxLooseEntry = {
  /** The client method that sends it, e.g. `'sendText'`: checked when it is added. */
  method: string;
  /** The params of one of the send methods, checked against `method`'s before they are stored. */
  params: OutboxParams<OutboxMethod>;
} & OutboxAddOptions;

/**
 * `addMany`'s second signature takes {@link OutboxLooseEntry} only where `method` is a plain
 * `string` (TypeScript no longer knows which): a method written as a literal is held to the first
 * signature, so a misspelt one, or params of another method, still fails to compile.
 */
export type OnlyWidenedMethods<E extends Pick<OutboxLooseEntry, 'method'>> = string extends E['method']
  ? unknown
  : never;

const MAX_PRIORITY = 2_097_152;
const MAX_KEY = 512;

// A lone surrogate (half of a UTF-16 pair) has no UTF-8 form: the job id (encodeURIComponent) and
// Redis cannot hold it as given.
const LONE_SURROGATE = /\p{Surrogate}/u;

/**
 * Refuses one field: the issue holds the rule, the message also says where (`entry 2: key: ...`, the
 * entry of `addMany` counted from 1; `issues[].path` stays 0-based).
 */
function invalid(rule: string, path: (string | number)[]): never {
  const issues = [{ path, message: rule }];
  throw new OAValidationError(formatIssues(issues), issues);
}

/** Throws `OAValidationError` (path `key`, after `at`) when `key` holds a lone UTF-16 surrogate. */
export function checkKeyText(key: string, at: (string | number)[] = []): void {
  if (LONE_SURROGATE.test(key)) {
    invalid('must be well-formed text: it holds a lone UTF-16 surrogate (half of a pair)', [...at, 'key']);
  }
}

/**
 * Checks one entry as the client would before sending it (params by the method's schema) and its
 * options; throws `OAValidationError` naming the field. `at` prefixes paths in `addMany`.
 */
export function checkEntry(method: unknown, params: unknown, options: unknown, at: (string | number)[] = []) {
  if (!OUTBOX_METHODS.includes(method as OutboxMethod)) {
    const methods = OUTBOX_METHODS.join(', ');
    const rule =
      method === undefined
        ? `required: one of ${methods}`
        : `must be one of ${methods} (got ${String(method)})`;
    invalid(rule, [...at, 'method']);
  }
  const name = method as OutboxMethod;
  try {
    validate(endpoints[name].params, params, `${name} params`);
  } catch (error) {
    if (at.length === 0 || !(error instanceof OAValidationError)) throw error;
    // In `addMany`: say which entry.
    const issues = error.issues.map((issue) => ({ ...issue, path: [...at, 'params', ...issue.path] }));
    const [index] = at;
    const entry = typeof index === 'number' ? `entry ${index + 1}` : at.join('.');
    throw new OAValidationError(`${entry}: ${error.message}`, issues);
  }
  if (typeof options !== 'object' || options === null)
    invalid('required: a key (the idempotency key, a string)', [...at, 'key']);
  const {
    key,
    delay,
    priority,
    at: sendAt,
    account,
    bulk,
    orderGroup,
  } = options as Partial<OutboxAddOptions>;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY) {
    invalid(`must be a string of 1 to ${MAX_KEY} characters (the idempotency key)`, [...at, 'key']);
  }
  checkKeyText(key, at);
  if (delay !== undefined && !(Number.isSafeInteger(delay) && delay >= 0)) {
    invalid('must be a whole number of ms, 0 or more', [...at, 'delay']);
  }
  if (
    priority !== undefined &&
    !(Number.isSafeInteger(priority) && priority >= 1 && priority <= MAX_PRIORITY)
  ) {
    invalid(`must be a whole number from 1 to ${MAX_PRIORITY}`, [...at, 'priority']);
  }
  if (account !== undefined) {
    if (typeof account !== 'string' || account.length === 0 || account.length > MAX_KEY) {
      invalid(`must be a string of 1 to ${MAX_KEY} characters (an account id)`, [...at, 'account']);
    }
    if (LONE_SURROGATE.test(account)) {
      invalid('must be well-formed text: it holds a lone UTF-16 surrogate (half of a pair)', [
        ...at,
        'account',
      ]);
    }
    if (priority !== undefined) {
      invalid("not allowed with account: an account's jobs go in turns (bulk: true for a campaign's)", [
        ...at,
        'priority',
      ]);
    }
  }
  if (bulk !== undefined && typeof bulk !== 'boolean') invalid('must be true or false', [...at, 'bulk']);
  if (bulk === true && account === undefined) {
    invalid("needs account: the bulk lane is an account's", [...at, 'bulk']);
  }
  if (orderGroup !== undefined) {
    if (typeof orderGroup !== 'string' || orderGroup.length === 0 || orderGroup.length > MAX_KEY) {
      invalid(`must be a string of 1 to ${MAX_KEY} characters (an order group, e.g. a user id)`, [
        ...at,
        'orderGroup',
      ]);
    }
    if (LONE_SURROGATE.test(orderGroup)) {
      invalid('must be well-formed text: it holds a lone UTF-16 surrogate (half of a pair)', [
        ...at,
        'orderGroup',
      ]);
    }
    if (account === undefined) {
      invalid("needs account: an order group is kept in an account's lane", [...at, 'orderGroup']);
    }
  }
  const lane = { account, bulk: bulk === true, orderGroup };
  if (sendAt !== undefined) {
    if (!(sendAt instanceof Date) || Number.isNaN(sendAt.getTime())) {
      invalid('must be a valid Date', [...at, 'at']);
    }
    if (delay !== undefined) invalid('not allowed with delay: give delay or at, not both', [...at, 'at']);
    return { method: name, key, delay: undefined, at: sendAt.getTime(), priority, ...lane };
  }
  return { method: name, key, delay, at: undefined, priority, ...lane };
}

/**
 * The BullMQ job id of a key: BullMQ refuses ids with `:` and integer ids, so the key is prefixed and
 * percent-encoded (readable in BullMQ's tools, one to one with the key).
 */
export function jobIdOf(key: string, account?: string): string {
  // `/` is never left as it is by encodeURIComponent: it cannot be part of either side.
  return account === undefined
    ? `k-${encodeURIComponent(key)}`
    : `a-${encodeURIComponent(account)}/${encodeURIComponent(key)}`;
}

/** Whether a job id is that of a job of an account (made by {@link jobIdOf} with an account). */
export function isAccountJobId(id: string): boolean {
  return id.startsWith('a-') && id.includes('/');
}

/** The key a job id was made from by {@link jobIdOf} (the id itself when it was not made so). */
export function keyOfJobId(id: string): string {
  const slash = id.indexOf('/');
  const encoded = id.startsWith('k-') ? id.slice(2) : isAccountJobId(id) ? id.slice(slash + 1) : undefined;
  if (encoded === undefined) return id;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return id;
  }
}
