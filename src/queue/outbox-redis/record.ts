/**
 * The outbox's own record of a job (`oa:job:<id>`, a hash under the outbox's keys, never BullMQ's job
 * hash): the "may have left" mark, written by the worker that holds the job's lock just before each
 * request leaves and removed when that request ends without delivering; how the job ended; the error
 * kept with it; how many times a worker put it back before it began. A job of an account waiting for
 * its turn keeps there also what BullMQ is given at its turn (its name, data and options).
 */
import type { IORedis, RedisClient } from '../../redis/client.js';
import { runScript, script } from '../../redis/script.js';
import { accountKeys, outboxKeys, recordKey } from './keys.js';

/** The fields of a job's record. */
export const FIELD = {
  /** JSON {@link SendRecord}: the send may have left. */
  sent: 'sent',
  /** How the job ended: `delivered`, `failed` or `unknown`; unset before. */
  end: 'end',
  /** JSON {@link OutboxError} of a job that failed or ended unknown. */
  error: 'error',
  /** How many of the job's tries were put back before they began (BullMQ counted them started). */
  backs: 'backs',
} as const;

/** How long past its retention a job's record is kept: BullMQ removes the job first. */
const OUTLIVE_MS = 86_400_000;

/** How long a job's record is kept once BullMQ has the job: its retention, and a day more. */
export function recordTtl(place: RecordPlace): number {
  return place.retentionMs + OUTLIVE_MS;
}

/** Who may have sent the job's request, and when. */
export interface SendRecord {
  /** The BullMQ lock token of the processing run that wrote it. */
  token: string;
  /** The worker process, to tell an operator where to look. */
  pid: number;
  /** The worker's host name. */
  host: string;
  /** ms since the epoch, when its processing run first wrote it. */
  at: number;
}

// Written only by the lock holder (KEYS[2], BullMQ's lock of the job, read), only while BullMQ keeps the
// job (KEYS[3], read) and, for a job of an account (ARGV[4] '1'), while the outbox keeps its record (a
// job cancelled or dropped with its queue has none), and only over nothing or its own run's record
// (each attempt of the run writes it again): a worker whose lock was taken over (it stalled, another
// picked the job up) cannot record, so its request does not leave.
const RECORD = script(`
if redis.call('EXISTS', KEYS[3]) == 0 then return 'gone' end
if ARGV[4] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'lock' end
local current = redis.call('HGET', KEYS[1], 'sent')
if current and current ~= ARGV[2] then return 'taken' end
redis.call('HSET', KEYS[1], 'sent', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 'ok'`);

// Only the run that wrote the record removes it, once its request certainly did not deliver.
const CLEAR = script(`
if redis.call('HGET', KEYS[1], 'sent') == ARGV[1] then redis.call('HDEL', KEYS[1], 'sent') end
return 1`);

/** What the record's calls need: where the outbox's keys are, and how long a final job is kept. */
export interface RecordPlace {
  readonly keyPrefix: string;
  /** ms a final job is kept. */
  readonly retentionMs: number;
}

/**
 * Writes `record` on the job unless BullMQ no longer keeps it, its lock is not `token`'s, another run's
 * record is there or (`ofAccount`) the outbox no longer keeps it; throws then, so that the request does
 * not leave.
 */
export async function writeRecord(
  redis: RedisClient,
  place: RecordPlace,
  jobId: string,
  token: string,
  record: string,
  ofAccount: boolean,
): Promise<void> {
  const jobKey = `${place.keyPrefix}${jobId}`;
  const answer = await runScript(
    redis,
    RECORD,
    [recordKey(place.keyPrefix, jobId), `${jobKey}:lock`, jobKey],
    [token, record, recordTtl(place), ofAccount ? '1' : '0'],
  );
  if (answer !== 'ok') {
    throw new Error(`the outbox job is no longer this worker's to send (${String(answer)})`);
  }
}

/** Removes this run's record: its request certainly did not deliver, the next attempt may send. */
export async function clearRecord(
  redis: RedisClient,
  keyPrefix: string,
  jobId: string,
  record: string,
): Promise<void> {
  await runScript(redis, CLEAR, [recordKey(keyPrefix, jobId)], [record]);
}

// A job's record, read as its run begins (KEYS[1]: its "may have left" mark, its count of tries put back,
// its name), and whether an operator holds its account (KEYS[2]): one call for a job of an account.
const READ = script(`local f = redis.call('HMGET', KEYS[1], ARGV[1], ARGV[2], 'name')
f[4] = redis.call('EXISTS', KEYS[2])
return f`);

/** A job's record as its run begins (see {@link readRecord}). */
export interface RecordRead {
  /** Its "may have left" mark (JSON {@link SendRecord}), or null. */
  sent: string | null;
  /** How many of its tries were put back before they began. */
  backs: number;
  /** Whether the outbox keeps a record of it. */
  exists: boolean;
  /** For a job of an account: whether an operator holds that account. */
  held: boolean;
}

/**
 * The record's "may have left" mark and count of tries put back, whether the outbox keeps it; for a job
 * of `account`, also whether an operator holds that account (`outbox.pause({ account })`).
 */
export async function readRecord(
  redis: IORedis,
  keyPrefix: string,
  jobId: string,
  account?: string,
): Promise<RecordRead> {
  const key = recordKey(keyPrefix, jobId);
  const [sent, backs, name, held] = (
    account === undefined
      ? await redis.hmget(key, FIELD.sent, FIELD.backs, 'name')
      : await runScript(redis, READ, [key, accountKeys(keyPrefix, account).held], [FIELD.sent, FIELD.backs])
  ) as (string | number | null)[];
  return {
    sent: sent === null || sent === undefined ? null : String(sent),
    backs: Number(backs ?? 0),
    exists: (name ?? null) !== null || (sent ?? null) !== null,
    held: Number(held ?? 0) === 1,
  };
}

// Sets one field of a record (ARGV[1]: its name, ARGV[2]: its value; ARGV[3] 'incr' to add ARGV[2]),
// kept as long as the job is.
const SET_FIELD = script(`
if ARGV[3] == 'incr' then redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1`);

/** Keeps the error of a try that did not send on the job's record (`outbox.get` shows it). */
export async function keepError(
  redis: RedisClient,
  place: RecordPlace,
  jobId: string,
  error: string,
): Promise<void> {
  const args = [FIELD.error, error, 'set', recordTtl(place)];
  await runScript(redis, SET_FIELD, [recordKey(place.keyPrefix, jobId)], args);
}

// Unknown jobs among the failed ones: an id counts once the job is in BullMQ's failed set (KEYS[2],
// read); ids whose record is gone (past retention) are dropped.
const COUNT_UNKNOWN = script(`
local n = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('ZSCORE', KEYS[2], id) then n = n + 1
  elseif redis.call('EXISTS', ARGV[1] .. id) == 0 then redis.call('ZREM', KEYS[1], id) end
end
return n`);

/** How many jobs ended `unknown` and are still kept. */
export async function countUnknown(
  redis: RedisClient,
  keyPrefix: string,
  failedKey: string,
): Promise<number> {
  const keys = outboxKeys(keyPrefix);
  return Number(await runScript(redis, COUNT_UNKNOWN, [keys.unknown, failedKey], [keys.recordBase]));
}

// Files the job among the unknown ones and keeps why on its record, for as long as the job is kept.
const MARK_UNKNOWN = script(`
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], 'end', 'unknown', 'error', ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1`);

/** Files the job among the unknown ones (before BullMQ moves it to failed). */
export async function markUnknown(
  redis: RedisClient,
  place: RecordPlace,
  jobId: string,
  error: string,
): Promise<void> {
  await runScript(
    redis,
    MARK_UNKNOWN,
    [outboxKeys(place.keyPrefix).unknown, recordKey(place.keyPrefix, jobId)],
    [Date.now(), jobId, error, recordTtl(place)],
  );
}

/** About how many outcomes the outbox's event stream keeps (as BullMQ's own stream, by default). */
const EVENTS_MAX_LEN = 10_000;

/** An outcome event as the outbox's event stream keeps it: its name and its JSON. */
export interface Told {
  readonly name: string;
  readonly data: string;
}

/**
 * Lua functions for the scripts that keep a job's end: `keepEnd(record, end, ttl)`, how the job ended,
 * kept on its record (unless it ended `unknown`, which stays) for `ttl` ms; `tell(stream, max, name,
 * data)`, its outcome event added to the outbox's event stream (the one writer of the stream's entries).
 */
export const KEEP_END = `
local function keepEnd(record, ended, ttl)
  if redis.call('HGET', record, 'end') ~= 'unknown' then redis.call('HSET', record, 'end', ended) end
  redis.call('PEXPIRE', record, ttl)
end
local function tell(stream, max, name, data)
  redis.call('XADD', stream, 'MAXLEN', '~', max, '*', 'outcome', name, 'data', data)
end
`;

/** The arguments of `tell` in {@link KEEP_END}: the stream's length kept, the event. */
export function tellArgs(told: Told): [number, string, string] {
  return [EVENTS_MAX_LEN, told.name, told.data];
}

// An outcome event alone, added to the outbox's event stream (KEYS[1]).
const TELL = script(`${KEEP_END}
tell(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1`);

/** Adds an outcome event to the outbox's event stream, alone (an outcome that ends nothing). */
export async function tellOutcome(redis: RedisClient, keyPrefix: string, told: Told): Promise<void> {
  await runScript(redis, TELL, [outboxKeys(keyPrefix).events], tellArgs(told));
}

// How a job ended, kept on its record for as long as the job is kept (unless it ended unknown), and its
// outcome event told (KEYS[2], ARGV[3..5]) in the same step: one call a job.
const MARK_END = script(`${KEEP_END}
keepEnd(KEYS[1], ARGV[1], ARGV[2])
tell(KEYS[2], ARGV[3], ARGV[4], ARGV[5])
return 1`);

/** Keeps how a job ended (`delivered` or `failed`) on its record, and tells `told`, its outcome. */
export async function markEnd(
  redis: RedisClient,
  place: RecordPlace,
  jobId: string,
  end: 'delivered' | 'failed',
  told: Told,
): Promise<void> {
  const keys = [recordKey(place.keyPrefix, jobId), outboxKeys(place.keyPrefix).events];
  await runScript(redis, MARK_END, keys, [end, recordTtl(place), ...tellArgs(told)]);
}

// The active jobs, and those of them whose lock is gone (their worker stopped renewing it), in one step
// (reads of BullMQ's keys): a job is made active with its lock, and its lock goes when it leaves active.
const COUNT_ACTIVE = script(`
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local orphaned = 0
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[1] .. id .. ':lock') == 0 then orphaned = orphaned + 1 end
end
return {#ids, orphaned}`);

/** How many jobs are active, and how many of those are orphaned (active without a lock). */
export async function countActive(
  redis: RedisClient,
  keyPrefix: string,
  activeKey: string,
): Promise<[number, number]> {
  const [active, orphaned] = (await runScript(redis, COUNT_ACTIVE, [activeKey], [keyPrefix])) as [
    number,
    number,
  ];
  return [Number(active), Number(orphaned)];
}

// Whether the job is active and its lock gone, in one step (reads).
const ORPHANED = script(`
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if id == ARGV[1] then return redis.call('EXISTS', KEYS[2]) == 0 and 1 or 0 end
end
return 0`);

/** Whether the job `jobId` is active without its lock: its worker stopped renewing it. */
export async function isOrphaned(
  redis: RedisClient,
  keyPrefix: string,
  activeKey: string,
  jobId: string,
): Promise<boolean> {
  return Number(await runScript(redis, ORPHANED, [activeKey, `${keyPrefix}${jobId}:lock`], [jobId])) === 1;
}

// A job the stalled check just handed out again: its data, and the try that was cut short (the tries
// started less those put back before they began, less the one begun since if a worker took it
// already: it is no longer waiting). Reads only.
const ORPHAN_TRY = script(`
local started = tonumber(redis.call('HGET', KEYS[1], 'ats') or '0') or 0
started = started - (tonumber(redis.call('HGET', KEYS[5], 'backs') or '0') or 0)
local waiting = redis.call('LPOS', KEYS[2], ARGV[1], 'RANK', -1, 'MAXLEN', 1000)
  or redis.call('LPOS', KEYS[3], ARGV[1], 'RANK', -1, 'MAXLEN', 1000)
  or redis.call('ZSCORE', KEYS[4], ARGV[1])
if not waiting then started = started - 1 end
return {redis.call('HGET', KEYS[1], 'data') or '', started}`);

/** The data and cut-short try of a job found orphaned and handed out again. */
export async function orphanTry(
  redis: RedisClient,
  keyPrefix: string,
  toKey: (name: string) => string,
  jobId: string,
): Promise<{ data: string; attempt: number }> {
  const keys = [
    `${keyPrefix}${jobId}`,
    toKey('wait'),
    toKey('paused'),
    toKey('prioritized'),
    recordKey(keyPrefix, jobId),
  ];
  const [data, attempt] = (await runScript(redis, ORPHAN_TRY, keys, [jobId])) as [string, number];
  return { data, attempt: Number(attempt) };
}

/** Redis's clock (`TIME`), in ms since the epoch: the one clock that decides when a job is due. */
export async function redisNow(redis: Pick<IORedisTime, 'time'>): Promise<number> {
  const [seconds, micros] = (await redis.time()).map(Number);
  return (seconds ?? 0) * 1000 + Math.floor((micros ?? 0) / 1000);
}

type IORedisTime = { time(): Promise<(string | number)[]> };

/** Counts a try that was put back before it began (BullMQ counted it started): it is not a try. */
export async function countBack(redis: RedisClient, place: RecordPlace, jobId: string): Promise<void> {
  const args = [FIELD.backs, 1, 'incr', recordTtl(place)];
  await runScript(redis, SET_FIELD, [recordKey(place.keyPrefix, jobId)], args);
}
