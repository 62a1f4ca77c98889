/**
 * The outbox's scripts of a cancel, and of a known key: a parked job taken out of its lanes, the record
 * of a job BullMQ removed, whether a job is being handed to BullMQ, which keys are known.
 */
import type { RedisClient } from '../../redis/client.js';
import { runScript, script } from '../../redis/script.js';
import { NOW } from '../../redis/scripts.js';
import { accountKeys, accountTag, outboxKeys, recordKey } from './keys.js';
import { ORDER } from './turns.js';

// For each job id (ARGV), whether its key is known: the outbox keeps its record or BullMQ its job (read).
// KEYS[1]: the queue prefix's first key of each (ARGV[1]: the queue prefix, ARGV[2]: the record base).
const EXISTING = script(`
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  out[i - 2] = (redis.call('EXISTS', ARGV[2] .. id) == 1 or redis.call('EXISTS', ARGV[1] .. id) == 1) and 1 or 0
end
return out`);

/** For each job id, whether its key is known: its job stored already (by any process), or its record kept. */
export async function storedAlready(
  redis: RedisClient,
  keyPrefix: string,
  jobIds: readonly string[],
): Promise<boolean[]> {
  const answer = (await runScript(
    redis,
    EXISTING,
    [outboxKeys(keyPrefix).ready],
    [keyPrefix, outboxKeys(keyPrefix).recordBase, ...jobIds],
  )) as number[];
  return answer.map((n) => Number(n) === 1);
}

// Cancels a parked job of an account: out of its lanes or from behind its order group (KEYS: lane, bulk,
// queued), and only if it is there: once out, no dispatch loop can admit it. Then its record goes (the
// key is free again), it leaves its account's index (jobs) and the outbox's `parked`, its account
// (ARGV[2]) leaves `ready` when its lanes are empty, and it leaves its order group (the account's base,
// ARGV[3]): the group's next job takes its place when it held it. One step: an add of the same key
// meanwhile finds it either whole or gone.
// KEYS: lane, bulk, queued, jobs, parked, ready, record. ARGV: id, tag, base.
const CANCEL_PARKED = script(`${NOW}${ORDER}
local id = ARGV[1]
local taken = redis.call('ZREM', KEYS[1], id) + redis.call('ZREM', KEYS[2], id) + redis.call('ZREM', KEYS[3], id)
if taken == 0 then return 0 end
redis.call('DEL', KEYS[7])
redis.call('ZREM', KEYS[4], id)
redis.call('ZREM', KEYS[5], id)
if redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3]) == 0 then
  redis.call('ZREM', KEYS[6], ARGV[2])
end
orderEnded(ARGV[3], id, KEYS[6], ARGV[2])
return 1`);

// A job BullMQ removed (a cancel): its record goes too, unless it shows the job ran (a send recorded, or
// an end: it started and ended between the cancel's read of its state and BullMQ's remove). A job of an
// account (ARGV[3], its base; '' for none) also leaves its account's index, its place in flight, the
// jobs being handed and its order group. KEYS: record, jobs, inflight, handing, ready. ARGV: id, tag, base.
// Answers 1 when the job never ran.
const FORGET_JOB = script(`${NOW}${ORDER}
local id = ARGV[1]
if redis.call('HEXISTS', KEYS[1], 'sent') == 1 or redis.call('HEXISTS', KEYS[1], 'end') == 1 then return 0 end
redis.call('DEL', KEYS[1])
if ARGV[3] ~= '' then
  redis.call('ZREM', KEYS[2], id)
  if redis.call('ZREM', KEYS[3], id) == 1 then redis.call('ZADD', KEYS[5], 'LT', now, ARGV[2]) end
  redis.call('ZREM', KEYS[4], id)
  orderEnded(ARGV[3], id, KEYS[5], ARGV[2])
end
return 1`);

const IN_SET = script(`return redis.call('ZSCORE', KEYS[1], ARGV[1])`);

/** Cancels job `id` of `account` if it waits for its turn (see `CANCEL_PARKED`): whether it did. */
export async function cancelParked(
  redis: RedisClient,
  keyPrefix: string,
  account: string,
  id: string,
): Promise<boolean> {
  const a = accountKeys(keyPrefix, account);
  const keys = outboxKeys(keyPrefix);
  const parkedKeys = [a.lane, a.bulk, a.queued, a.jobs, keys.parked, keys.ready, recordKey(keyPrefix, id)];
  return (await runScript(redis, CANCEL_PARKED, parkedKeys, [id, accountTag(account), a.base])) === 1;
}

/**
 * Forgets the record of job `id` (of `account`, if any) that BullMQ removed (see `FORGET_JOB`):
 * whether the job never ran.
 */
export async function forgetRemoved(
  redis: RedisClient,
  keyPrefix: string,
  id: string,
  account: string | undefined,
): Promise<boolean> {
  const record = recordKey(keyPrefix, id);
  const keys = outboxKeys(keyPrefix);
  const a = account === undefined ? undefined : accountKeys(keyPrefix, account);
  const tag = account === undefined ? '' : accountTag(account);
  const forgetKeys = [record, a?.jobs ?? record, a?.inflight ?? record, keys.handing, keys.ready];
  return (await runScript(redis, FORGET_JOB, forgetKeys, [id, tag, a?.base ?? ''])) === 1;
}

/** Whether job `id` was admitted to its turn and is being handed to BullMQ. */
export async function beingHanded(redis: RedisClient, keyPrefix: string, id: string): Promise<boolean> {
  return (await runScript(redis, IN_SET, [outboxKeys(keyPrefix).handing], [id])) !== null;
}
