/**
 * The "may have left" record of an outbox job: a field of the BullMQ job's own hash (so it goes with
 * the job), written by the worker that holds the job's lock just before each request leaves, removed
 * when that request ends without delivering.
 */
import type { RedisClient } from '../redis/client.js';
import { runScript, script } from '../redis/script.js';

/** The job hash fields this module adds (BullMQ ignores them). */
export const FIELD = {
  /** JSON {@link SendRecord}: the send may have left. */
  sent: 'oaSent',
  /** `unknown` when the job ended so; unset otherwise. */
  state: 'oaState',
  /** JSON {@link OutboxError} of a job that failed or ended unknown. */
  error: 'oaError',
} as const;

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

// Written only by the lock holder, and only over nothing or its own run's record (each attempt of the
// run writes it again): a worker whose lock was taken over (it stalled, another picked the job up)
// cannot record, so its request does not leave.
const RECORD = script(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 'gone' end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 'lock' end
local current = redis.call('HGET', KEYS[1], ARGV[3])
if current and current ~= ARGV[2] then return 'taken' end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[2])
return 'ok'`);

// Only the run that wrote the record removes it, once its request certainly did not deliver.
const CLEAR = script(`
if redis.call('HGET', KEYS[1], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[1], ARGV[2]) end
return 1`);

/**
 * Writes `record` on the job unless the job is gone, its lock is not `token`'s or another run's record
 * is there; throws then, so that the request does not leave.
 */
export async function writeRecord(
  redis: RedisClient,
  jobKey: string,
  token: string,
  record: string,
): Promise<void> {
  const answer = await runScript(redis, RECORD, [jobKey, `${jobKey}:lock`], [token, record, FIELD.sent]);
  if (answer !== 'ok') {
    throw new Error(`the outbox job is no longer this worker's to send (${String(answer)})`);
  }
}

/** Removes this run's record: its request certainly did not deliver, the next attempt may send. */
export async function clearRecord(redis: RedisClient, jobKey: string, record: string): Promise<void> {
  await runScript(redis, CLEAR, [jobKey], [record, FIELD.sent]);
}

// Unknown jobs among the failed ones: an id counts once the job is in the failed set; ids whose job
// is gone (past retention) are dropped.
const COUNT_UNKNOWN = script(`
local n = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if redis.call('ZSCORE', KEYS[2], id) then n = n + 1
  elseif redis.call('EXISTS', ARGV[1] .. id) == 0 then redis.call('ZREM', KEYS[1], id) end
end
return n`);

/** How many jobs ended `unknown` and are still kept. */
export async function countUnknown(redis: RedisClient, keyPrefix: string): Promise<number> {
  const n = await runScript(
    redis,
    COUNT_UNKNOWN,
    [`${keyPrefix}oa:unknown`, `${keyPrefix}failed`],
    [keyPrefix],
  );
  return Number(n);
}

// Files the job among the unknown ones; marks its hash while the job is there.
const MARK_UNKNOWN = script(`
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], ARGV[3], 'unknown', ARGV[4], ARGV[5]) end
return 1`);

/** Files the job among the unknown ones (before it is moved to failed). */
export async function markUnknown(
  redis: RedisClient,
  keyPrefix: string,
  jobId: string,
  error: string,
): Promise<void> {
  const jobKey = `${keyPrefix}${jobId}`;
  await runScript(
    redis,
    MARK_UNKNOWN,
    [`${keyPrefix}oa:unknown`, jobKey],
    [Date.now(), jobId, FIELD.state, FIELD.error, error],
  );
}

// The active jobs, and those of them whose lock is gone (their worker stopped renewing it), in one step:
// a job is made active with its lock, and its lock goes when it leaves active, both atomically.
const COUNT_ACTIVE = script(`
local ids = redis.call('LRANGE', KEYS[1], 0, -1)
local orphaned = 0
for _, id in ipairs(ids) do
  if redis.call('EXISTS', ARGV[1] .. id .. ':lock') == 0 then orphaned = orphaned + 1 end
end
return {#ids, orphaned}`);

/** How many jobs are active, and how many of those are orphaned (active without a lock). */
export async function countActive(redis: RedisClient, keyPrefix: string): Promise<[number, number]> {
  const [active, orphaned] = (await runScript(redis, COUNT_ACTIVE, [`${keyPrefix}active`], [keyPrefix])) as [
    number,
    number,
  ];
  return [Number(active), Number(orphaned)];
}

// Whether the job is active and its lock gone, in one step.
const ORPHANED = script(`
for _, id in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if id == ARGV[1] then return redis.call('EXISTS', KEYS[2]) == 0 and 1 or 0 end
end
return 0`);

/** Whether the job `jobId` is active without its lock: its worker stopped renewing it. */
export async function isOrphaned(redis: RedisClient, keyPrefix: string, jobId: string): Promise<boolean> {
  return (
    Number(await runScript(redis, ORPHANED, [`${keyPrefix}active`, `${keyPrefix}${jobId}:lock`], [jobId])) ===
    1
  );
}

// A job the stalled check just handed out again: its data, and the try that was cut short (the tries
// started, less the one begun since if a worker took it already: it is no longer waiting).
const ORPHAN_TRY = script(`
local started = tonumber(redis.call('HGET', KEYS[1], 'ats') or '0') or 0
local waiting = redis.call('LPOS', KEYS[2], ARGV[1], 'RANK', -1, 'MAXLEN', 1000)
  or redis.call('LPOS', KEYS[3], ARGV[1], 'RANK', -1, 'MAXLEN', 1000)
  or redis.call('ZSCORE', KEYS[4], ARGV[1])
if not waiting then started = started - 1 end
return {redis.call('HGET', KEYS[1], 'data') or '', started}`);

/** The data and cut-short try of a job found orphaned and handed out again. */
export async function orphanTry(
  redis: RedisClient,
  keyPrefix: string,
  jobId: string,
): Promise<{ data: string; attempt: number }> {
  const keys = [`${keyPrefix}${jobId}`, `${keyPrefix}wait`, `${keyPrefix}paused`, `${keyPrefix}prioritized`];
  const [data, attempt] = (await runScript(redis, ORPHAN_TRY, keys, [jobId])) as [string, number];
  return { data, attempt: Number(attempt) };
}

/** Redis's clock (`TIME`), in ms since the epoch: the one clock that decides when a job is due. */
export async function redisNow(redis: Pick<IORedisTime, 'time'>): Promise<number> {
  const [seconds, micros] = (await redis.time()).map(Number);
  return (seconds ?? 0) * 1000 + Math.floor((micros ?? 0) / 1000);
}

type IORedisTime = { time(): Promise<(string | number)[]> };

// A try that was put back before it began (picked up before its due time) is not a try.
const UNSTART = script(`
if tonumber(redis.call('HGET', KEYS[1], 'ats') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'ats', -1) end
return 1`);

/** Uncounts the start of a try that was put back before it began. */
export async function unstart(redis: RedisClient, jobKey: string): Promise<void> {
  await runScript(redis, UNSTART, [jobKey], []);
}
