/**
 * What an outbox worker does with one job: send it at most once, across crashes. The "may have left"
 * mark is on the job's record (the outbox's own, see outbox-redis/record.ts) exactly while a request
 * that can deliver is in flight: written as each attempt leaves, removed when the attempt ends without
 * delivering (before any wait). A job handed out again
 * that carries it ends `unknown` instead of being sent again; so does a job whose call rejected with
 * `deliveryUnknown`. `failed` is kept for what certainly was not delivered.
 */
import { hostname } from 'node:os';
import type { Job } from 'bullmq';
import type { OAAccounts } from '../accounts/accounts.js';
import type { OAClient } from '../client.js';
import type { RequestOptions } from '../core/options.js';
import { isOAError, OAConnectionError } from '../errors.js';
import type { IORedis } from '../redis/client.js';
import type { BullMQ } from './load.js';
import { checkEntry, type OutboxMethod } from './methods.js';
import { anchorDue, isAnchor } from './outbox-redis/anchor.js';
import {
  clearRecord,
  countBack,
  keepError,
  markUnknown,
  type RecordPlace,
  type RecordRead,
  readRecord,
  redisNow,
  type SendRecord,
  writeRecord,
} from './outbox-redis/record.js';

/** What an outbox job carries (readable in BullMQ's tools). */
export interface OutboxJobData {
  /** The client method that sends it. */
  method: OutboxMethod;
  /** Its params, as checked and stored. */
  params: unknown;
  /** The app's idempotency key (the job's id is made from it). */
  key: string;
  /** For a job added with `at` or `delay`: when it is due, in ms since the epoch on Redis's clock. */
  notBefore?: number;
  /** The account that sends it, for a job added with `account`. */
  account?: string;
  /** `true` for a job added with `bulk: true` (a campaign's send). */
  bulk?: boolean;
  /** Its order group, for a job added with `orderGroup`: the jobs of its group run one at a time. */
  orderGroup?: string;
}

/** A failure kept with its job: what the SDK's error said. */
export interface OutboxError {
  /** The error's class, e.g. `OABadRequestError`. */
  name: string;
  /** Its message, secrets already removed. */
  message: string;
  /** The HTTP status of an API error. */
  status?: number;
  /** The API's error code, when it gave one. */
  code?: string;
  /** The request may have reached the API (see `OAError.deliveryUnknown`). */
  deliveryUnknown?: boolean;
  /** For `unknown`: the worker that may have sent it, and when it first recorded so. */
  record?: SendRecord;
}

/**
 * The try each job a processor ran is at (BullMQ's tries started, less those put back before they
 * began), for its outcome's event.
 */
export const tries = new WeakMap<object, number>();

/** How the BullMQ failure reason of every job that ended `unknown` starts. */
const UNKNOWN_PREFIX = 'outcome unknown: ';

/** The message a job handed out again with its record in place fails with in BullMQ. */
const UNKNOWN_REASON = `${UNKNOWN_PREFIX}the request may have left before its worker stopped`;

/** Whether the processor ended its job `unknown` by throwing `error`. */
export function endedUnknown(error: Error): boolean {
  return error.name === 'UnrecoverableError' && error.message.startsWith(UNKNOWN_PREFIX);
}

// What the processor threw, described as kept on the job: the worker's events report the same.
const described = new WeakMap<object, OutboxError>();

/** `error` as the processor kept it on its job (else described now). */
export function outboxErrorOf(error: unknown): OutboxError {
  return (typeof error === 'object' && error !== null && described.get(error)) || describe(error);
}

function thrown<E extends Error>(error: E, kept: OutboxError): E {
  described.set(error, kept);
  return error;
}

function describe(error: unknown): OutboxError {
  const e = error as Partial<OutboxError> & { status?: unknown; code?: unknown };
  const out: OutboxError = {
    name: typeof e?.name === 'string' ? e.name : 'Error',
    message: typeof e?.message === 'string' ? e.message : String(error),
  };
  if (typeof e?.status === 'number') out.status = e.status;
  if (typeof e?.code === 'string') out.code = e.code;
  if (e?.deliveryUnknown === true) out.deliveryUnknown = true;
  return out;
}

/**
 * Any tool can add a job to the queue: it is run only as `add` would have stored it (an outbox send
 * method, params that pass its schema, a key), by the same check. Anything else (`generateToken`,
 * `close`, a name the client lacks) fails for good, before anything is sent or stored as its result.
 */
async function refuseForeign(bull: BullMQ, redis: IORedis, place: RecordPlace, jobId: string, data: unknown) {
  const { method, params, key } = (typeof data === 'object' && data !== null ? data : {}) as Record<
    string,
    unknown
  >;
  try {
    checkEntry(method, params, { key });
  } catch (error) {
    const kept = describe(error);
    await keepError(redis, place, jobId, JSON.stringify(kept));
    throw thrown(new bull.UnrecoverableError(`${kept.name}: ${kept.message}`), kept);
  }
}

/** The backoff type of outbox jobs: {@link outboxBackoff}. */
export const BACKOFF_TYPE = 'oa-outbox';

/** How long BullMQ waits before its first run again of a job that was not sent; doubled each time. */
export const FIRST_BACKOFF_MS = 1000;

/** The longest `Retry-After` a job waits for before it runs again: a server's hour, not its day. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/**
 * BullMQ's wait before it runs a job again (its `backoffStrategy`): the job was not sent and its
 * client's own retries are spent. Exponential from {@link FIRST_BACKOFF_MS}, and never sooner than a
 * 429's `Retry-After` (up to an hour): a re-run before it would only meet the same 429 and use up a try.
 * Another backoff type (a job added by another tool) is not run again (-1).
 */
export function outboxBackoff(attemptsMade: number, type?: string, error?: Error): number {
  if (type !== BACKOFF_TYPE) return -1;
  const exponential = FIRST_BACKOFF_MS * 2 ** Math.max(0, attemptsMade - 1);
  const asked = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return typeof asked === 'number' && Number.isFinite(asked)
    ? Math.max(exponential, Math.min(asked, MAX_RETRY_AFTER_MS))
    : exponential;
}

/**
 * Puts back a job that a worker picked up before it is due by Redis's clock: BullMQ compares a delayed
 * job's time with the clock of the worker that looks, and a worker whose clock runs fast would send it
 * early. It goes back to delayed for the time left by Redis's clock (counted on this worker's, so that
 * this worker takes it again then), uncounted as a try; nothing was sent.
 */
export async function holdUntilDue(
  bull: BullMQ,
  redis: IORedis,
  place: RecordPlace,
  job: Job<OutboxJobData>,
  token: string | undefined,
): Promise<void> {
  const due = (job.data as Partial<OutboxJobData> | undefined)?.notBefore;
  if (typeof due !== 'number' || !Number.isFinite(due)) return;
  const left = due - (await redisNow(redis));
  if (left <= 0) return;
  await putBack(bull, redis, place, job, token, left);
}

/**
 * Puts back the queue's anchor (outbox-redis/anchor.ts), should a tool have promoted it: it is never run, and
 * stays BullMQ's delayed job.
 */
export async function holdIfAnchor(bull: BullMQ, job: Job, token: string | undefined): Promise<void> {
  if (!isAnchor(job)) return;
  await job.moveToDelayed(anchorDue(), token);
  throw new bull.DelayedError();
}

/**
 * Puts a job this worker picked up back to delayed for `ms` (counted on this worker's clock), uncounted
 * as a try: nothing was sent. Ends the processor's run with BullMQ's `DelayedError`.
 */
async function putBack(
  bull: BullMQ,
  redis: IORedis,
  place: RecordPlace,
  job: Job<OutboxJobData>,
  token: string | undefined,
  ms: number,
): Promise<never> {
  await job.moveToDelayed(Date.now() + ms, token);
  await countBack(redis, place, job.id ?? '');
  throw new bull.DelayedError();
}

/** How long a job of a held account waits before it is looked at again: nothing is sent meanwhile. */
const HELD_MS = 1000;

/** What the gate read of each job's record as its run began ({@link holdIfHeld}), for its processor. */
const readAtGate = new WeakMap<object, RecordRead>();

/**
 * Reads the job's record as its run begins, and with it, for a job of an account, whether an operator
 * holds that account (`outbox.pause({ account })`): one call. A job of a held account, admitted before
 * the pause, does not start until `resume`: it is put back, uncounted as a try. Runs in the worker's
 * gate, outside the job's trace: a hold is not a failed try.
 */
export async function holdIfHeld(
  bull: BullMQ,
  redis: IORedis,
  place: RecordPlace,
  job: Job<OutboxJobData>,
  token: string | undefined,
): Promise<void> {
  const account = (job.data as Partial<OutboxJobData> | undefined)?.account;
  const read = await readRecord(
    redis,
    place.keyPrefix,
    job.id ?? '',
    typeof account === 'string' ? account : undefined,
  );
  if (read.held) await putBack(bull, redis, place, job, token, HELD_MS);
  readAtGate.set(job, read);
}

/** Who sends the jobs of a worker: `client` those without an account, `accounts` the others. */
export interface Senders {
  client?: OAClient | undefined;
  accounts?: Pick<OAAccounts, 'client'> | undefined;
  /** With `client`: the one account whose jobs `client` sends. */
  account?: string | undefined;
  /** Holds back the turns of `account` for `ms` (its login was refused). */
  pause(account: string, ms: number): Promise<void>;
}

/** Whether `error` is a refused login (a rotated or revoked secret): the send did not leave. */
function loginRefused(error: unknown): boolean {
  const e = error as { name?: unknown; path?: unknown; deliveryUnknown?: unknown };
  return (
    isOAError(error) &&
    e.name === 'OAUnauthorizedError' &&
    typeof e.path === 'string' &&
    e.path.endsWith('/auth/token') &&
    e.deliveryUnknown !== true
  );
}

/**
 * Whether `error` is an outage of the caller's credentials store (it threw, or did not answer in time):
 * nothing was sent, and it says nothing of the job.
 */
function storeOutage(error: unknown): boolean {
  return isOAError(error) && error.name === 'OACredentialsError' && error.deliveryUnknown !== true;
}

/** The shortest and longest wait of an account's jobs while its credentials store is out. */
const OUTAGE_FIRST_MS = 1000;
const OUTAGE_MAX_MS = 30_000;
/** An outage not seen for this long is over. */
const OUTAGE_OVER_MS = 60_000;

/** The client of a job: its account's, or the worker's client for a job without one. */
function senderOf(data: OutboxJobData, senders: Senders): OAClient | undefined {
  const { account } = (data ?? {}) as Partial<OutboxJobData>;
  if (typeof account !== 'string') return senders.client;
  if (senders.account !== undefined && account !== senders.account) return undefined;
  return senders.accounts?.client(account);
}

/** How long a job this worker has no client for waits before any worker takes it again. */
const NOT_MINE_MS = 1000;

/**
 * Puts back a job this worker has no client for (a job without an account in a worker given only
 * `accounts`, or the other way round): another worker sends it. Nothing is sent, and the try is not
 * counted.
 */
export async function holdIfNotMine(
  bull: BullMQ,
  redis: IORedis,
  place: RecordPlace,
  job: Job<OutboxJobData>,
  token: string | undefined,
  senders: Senders,
): Promise<void> {
  if (senderOf(job.data, senders)) return;
  await putBack(bull, redis, place, job, token, NOT_MINE_MS);
}

/** The job processor of `outbox.work`, for its client and its accounts. */
export function outboxProcessor(
  bull: BullMQ,
  redis: IORedis,
  place: RecordPlace,
  senders: Senders,
  replyReserve: number,
): (job: Job<OutboxJobData>, token?: string) => Promise<unknown> {
  // Each account's outage of its credentials store ('' for the worker's client), as this worker saw it:
  // its jobs wait as long as the outage has lasted (from 1 s, up to 30 s), so that a short one costs
  // seconds and a long one is not polled. A send that gets through ends it; one not seen for a minute
  // is over (a later one starts from 1 s again), and is forgotten.
  const outages = new Map<string, { since: number; last: number }>();
  const outageWait = (who: string): number => {
    const now = Date.now();
    for (const [key, seen] of outages) if (now - seen.last > OUTAGE_OVER_MS) outages.delete(key);
    const seen = outages.get(who) ?? { since: now, last: now };
    seen.last = now;
    outages.set(who, seen);
    return Math.min(OUTAGE_MAX_MS, Math.max(OUTAGE_FIRST_MS, now - seen.since));
  };
  return async (job, token) => {
    const id = job.id ?? '';
    const account = (job.data as Partial<OutboxJobData> | undefined)?.account;
    const ofAccount = typeof account === 'string';
    const {
      sent: previous,
      backs,
      exists,
    } = readAtGate.get(job) ??
    (await readRecord(redis, place.keyPrefix, id, ofAccount ? account : undefined));
    await refuseForeign(bull, redis, place, id, job.data);
    const client = senderOf(job.data, senders) as OAClient;
    // The try this is: BullMQ counts the tries started, those put back before they began among them.
    tries.set(job, Math.max(1, (job.attemptsStarted ?? 0) - backs));
    if (ofAccount && !exists) {
      // Its record is gone: cancelled while it was handed to BullMQ, or its queue was obliterated.
      const kept = describe(
        new Error('the outbox no longer keeps this job (cancelled, or its queue obliterated)'),
      );
      throw thrown(new bull.UnrecoverableError(kept.message), kept);
    }
    if (previous !== null) {
      let record: SendRecord | undefined;
      try {
        record = JSON.parse(previous) as SendRecord;
      } catch {}
      const error: OutboxError = { name: 'OAOutcomeUnknown', message: UNKNOWN_REASON, deliveryUnknown: true };
      if (record) error.record = record;
      await markUnknown(redis, place, id, JSON.stringify(error));
      throw thrown(new bull.UnrecoverableError(UNKNOWN_REASON), error);
    }
    const record = JSON.stringify({
      token: token ?? '',
      pid: process.pid,
      host: hostname(),
      at: Date.now(),
    } satisfies SendRecord);
    // Through the client's public seam: the record as each attempt leaves, gone when it did not deliver.
    // A campaign's send yields to the account's other sends in the rate limiter (`bulk`), and leaves
    // them the outbox's `replyReserve` of each window.
    const options: RequestOptions = {
      hooks: {
        beforeSend: [() => writeRecord(redis, place, id, token ?? '', record, ofAccount)],
        notDelivered: [() => clearRecord(redis, place.keyPrefix, id, record)],
      },
      ...(job.data.bulk === true ? { bulk: true, replyReserve } : {}),
    };
    const { method, params } = job.data;
    const send = client[method] as (params: unknown, options: RequestOptions) => Promise<unknown>;
    try {
      const result = await send.call(client, params, options);
      outages.delete(account ?? '');
      return result;
    } catch (error) {
      const kind = isOAError(error) ? error.retryClass : 'final';
      const kept = describe(error);
      if (kept.deliveryUnknown) {
        // The request may have been acted on: `unknown`, as for a worker that died with it in flight.
        kept.record = JSON.parse(record) as SendRecord;
        await markUnknown(redis, place, id, JSON.stringify(kept));
        throw thrown(new bull.UnrecoverableError(`${UNKNOWN_PREFIX}${kept.name}: ${kept.message}`), kept);
      }
      await keepError(redis, place, id, JSON.stringify(kept));
      if (storeOutage(error)) {
        // Its credentials could not be read (your store threw or hung): not a verdict on the job. It
        // waits, uncounted as a try, and its account's other jobs with it, until the store answers.
        await clearRecord(redis, place.keyPrefix, id, record);
        const waitMs = outageWait(typeof account === 'string' ? account : '');
        if (typeof account === 'string') await senders.pause(account, waitMs).catch(() => {});
        await putBack(bull, redis, place, job, token, waitMs);
      }
      if (typeof account === 'string' && loginRefused(error)) {
        // Its account's login was refused (a rotated secret): nothing left. The job waits (BullMQ's
        // backoff) and its account's other jobs with it, until the resolver gives working credentials.
        await clearRecord(redis, place.keyPrefix, id, record);
        await senders.pause(account, outboxBackoff(job.attemptsMade + 1, BACKOFF_TYPE)).catch(() => {});
        throw thrown(error as Error, kept);
      }
      // Nothing left: the retry (BullMQ's backoff) may send. A call stopped before it delivered (its
      // client closed while it waited, in a shutdown) is such a failure too: a later run may send it.
      const stopped = error instanceof OAConnectionError;
      if (kind === 'rejected' || kind === 'not_sent' || stopped) {
        await clearRecord(redis, place.keyPrefix, id, record);
        throw typeof error === 'object' && error !== null ? thrown(error as Error, kept) : error;
      }
      // Certainly not delivered, and a verdict that sending again would not change: `failed`.
      throw thrown(new bull.UnrecoverableError(`${kept.name}: ${kept.message}`), kept);
    }
  };
}
