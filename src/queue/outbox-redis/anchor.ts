/**
 * What ties an outbox's own records to its BullMQ queue: an anchor job, BullMQ's own (added through
 * `Queue.add`), kept delayed for years. BullMQ's `obliterate()` (and `drain(true)`, which removes the
 * delayed jobs) removes it with every job of the queue; the outbox's records, under its own keys,
 * are not BullMQ's to remove, so the outbox's scripts look for the anchor first ({@link VOID}): once
 * anchored and the anchor gone, every record the outbox kept goes too, and none of its jobs is sent.
 * BullMQ's `clean()` never removes it (its time is in the future), nor does `removeOrphanedJobs()` (it is
 * in the delayed set).
 */
import type { Job, Queue } from 'bullmq';
import type { RedisClient } from '../../redis/client.js';
import { runScript, script } from '../../redis/script.js';
import { ANCHOR_ID, accountKeys, outboxKeys } from './keys.js';

/** The anchor's BullMQ job name: what bull-board shows of it. */
const ANCHOR_NAME = 'oa-outbox-anchor';

/** How far in the future the anchor is due: it is never run (a worker that gets it puts it back). */
const ANCHOR_MS = 5 * 365 * 86_400_000;

/**
 * A Lua function for the outbox's scripts, `voided(p)` (`p`: the queue's prefix): true, and every
 * record of the outbox removed, when the queue was anchored and its anchor is gone. Records of jobs
 * without an account that did not end `unknown` are not indexed: they expire with their retention.
 */
export const VOID = (() => {
  // The keys' names less the queue's prefix (keys.ts), joined to it here as the keys are.
  const k = outboxKeys('');
  const a = accountKeys('', '');
  const perAccount = [a.lane, a.bulk, a.inflight, a.jobs, a.pause, a.held, a.queued].map((key) =>
    key.slice(a.base.length),
  );
  return `
local function voided(p)
  if redis.call('EXISTS', p .. '${k.anchored}') == 0 or redis.call('EXISTS', p .. '${ANCHOR_ID}') == 1 then
    return false
  end
  for _, tag in ipairs(redis.call('ZRANGE', p .. '${k.accounts}', 0, -1)) do
    local acct = p .. '${k.accountBase}' .. tag .. ':'
    for _, id in ipairs(redis.call('ZRANGE', acct .. 'jobs', 0, -1)) do redis.call('DEL', p .. '${k.recordBase}' .. id) end
    for _, group in ipairs(redis.call('HKEYS', acct .. 'holders')) do redis.call('DEL', acct .. 'order:' .. group) end
    for _, name in ipairs({ '${perAccount.join("', '")}', 'groups', 'holders' }) do redis.call('DEL', acct .. name) end
  end
  for _, id in ipairs(redis.call('ZRANGE', p .. '${k.unknown}', 0, -1)) do redis.call('DEL', p .. '${k.recordBase}' .. id) end
  for _, key in ipairs({ '${[k.accounts, k.ready, k.parked, k.unknown, k.handing, k.anchored].join("', '")}' }) do
    redis.call('DEL', p .. key)
  end
  return true
end
`;
})();

// The anchor is there (KEYS[2], its job hash): the queue is anchored from now on (KEYS[1]).
const ANCHORED =
  script(`if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('SET', KEYS[1], '1') return 1 end
return 0`);

/** Adds the queue's anchor (BullMQ's `add`: a no-op when it is there), then marks the queue anchored. */
export async function anchorQueue(queue: Queue, redis: RedisClient, keyPrefix: string): Promise<void> {
  await queue.add(
    ANCHOR_NAME,
    {
      about: 'ties the outbox to this queue: removing it (obliterate) drops the jobs waiting for their turn',
    },
    {
      jobId: ANCHOR_ID,
      // Its time in the future: BullMQ's clean() compares a job's time with now less its grace.
      timestamp: Date.now() + ANCHOR_MS,
      delay: 1,
      attempts: 1,
      removeOnComplete: true,
      removeOnFail: true,
    },
  );
  await runScript(redis, ANCHORED, [outboxKeys(keyPrefix).anchored, `${keyPrefix}${ANCHOR_ID}`], []);
}

/** Whether `job` is an outbox's anchor (a worker that gets it, promoted by a tool, puts it back). */
export function isAnchor(job: Pick<Job, 'id'>): boolean {
  return job.id === ANCHOR_ID;
}

/** When a worker that got the anchor puts it back for. */
export function anchorDue(): number {
  return Date.now() + ANCHOR_MS;
}
