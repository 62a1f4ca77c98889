/**
 * One outbox for every account: fair turns, each account's quota used, replies ahead of campaigns.
 *
 * The design, on open-source BullMQ and Redis (BullMQ's groups are a Pro feature; a queue and a worker
 * per account cost connections and polling for every idle account):
 *
 * - **One BullMQ queue**, the outbox's own. A job with an `account` becomes a plain BullMQ job of that
 *   queue at its turn (id `a-<account>/<key>`: keys unique per account), so that everything the outbox
 *   does for one job holds as it is: the at-most-once record, `unknown`/`failed`/`delivered`, retries
 *   with backoff, the stalled check, tracing, events, retention. Until its turn it is **parked**: only
 *   the outbox's own record of it is kept (`oa:job:<id>`, with what BullMQ is given at its turn), so
 *   no BullMQ worker can take it and nothing of BullMQ's is written; the records of a whole chunk are
 *   written by one script of ours ({@link STORE}), not one of BullMQ's per job.
 * - **Lanes.** Its id is in one of the account's two lanes (sorted sets scored by when it is
 *   due, then by the order added): `lane` for ordinary jobs, `bulk` for `bulk: true`. An account with
 *   a job in a lane is in **`ready`**, one sorted set for the outbox scored by when the account may
 *   next be served. Nothing else is kept per account; an account with nothing queued is in no
 *   structure a worker reads, so 10,000 idle accounts cost what 1 does.
 * - **Turns.** Each worker process runs one dispatch loop: one script ({@link ADMIT}) takes the account
 *   at the head of `ready` whose time has come, takes one job from its lanes (the loop then hands it to
 *   BullMQ with `Queue.addBulk`, its job id making that step idempotent: a job admitted by a loop
 *   that stopped before BullMQ had it is in `handing`, and handed again by any loop a few seconds
 *   later) and puts the account back at the tail of `ready` (scored now):
 *   accounts with work take turns, one job each, in every process alike. BullMQ's worker then runs
 *   the job as any other. The wait list is kept short (at most twice the worker's `concurrency`,
 *   refilled once `concurrency` places are free: one `addBulk` of many jobs costs BullMQ less a job
 *   than many of a few), so a job admitted for a small account starts after a few jobs, whatever the
 *   backlog of the others.
 * - **Quota.** The send itself takes its slot in the account's client's rate limiter (with a
 *   `coordination`, the shared Redis windows of that account across every process): one mechanism,
 *   never a second count. What the turns add is a cap on each account's jobs in flight across the
 *   fleet ({@link ACCOUNT_CAP}: admitted and not ended, retries waiting out a backoff included), kept
 *   in the account's `inflight` set: an account at its quota (or meeting 429s, `JOB_BUSY`) holds at
 *   most that many of the workers' slots, waiting in its own limiter, and under backlog its limiter
 *   always has a send queued, so its quota is used whole.
 * - **The bulk lane.** The `lane` is always taken before `bulk`, and `bulk` jobs only while the account
 *   has fewer than {@link BULK_CAP} in flight: one place of the cap stays for a reply, which is then
 *   admitted at once. Bulk jobs are sent with `bulk: true`, so in the limiter the reply goes ahead of
 *   the bulk sends queued there (in this process, and with a coordination in every other): it takes
 *   the account's next free slot.
 * - **A refused login** (a rotated secret) is not sent: its job is retried with the outbox's backoff,
 *   and the account is **paused** ({@link PAUSE}: a key with a time to live, read by `ADMIT`) for that
 *   backoff, so its other jobs wait in their lanes instead of each meeting the refusal.
 * - **Order groups.** Jobs of one account added with the same `orderGroup` (a bot's replies to one
 *   user) are admitted one at a time, in the order added: only the group's first job not ended (its
 *   **holder**, in `holders`) is in a lane; the others wait in the group's list (`order:<group>`, in the
 *   order added) and in `queued` (scored as in a lane, for `get`, `counts` and `cancel`). When the holder
 *   ends (delivered, failed, unknown, cancelled, or found gone), the next job of the list takes its
 *   place in its lane ({@link ORDER}). Until then the group's next job is not in BullMQ's lists, so
 *   no worker can start it while the previous one runs, retries or waits out a killed worker's lock.
 *   A job without a group is stored and admitted as before, with no read or write of these keys.
 * - **Crashes.** Admission is one script (a job is in a lane or in `handing` until BullMQ has it, never
 *   lost between);
 *   a job's place in `inflight` is given back by its worker when it ends, and else dropped by `ADMIT`
 *   once the job is final or gone (a worker that died): nothing leaks. So is an order group: its
 *   holder's end is told by its worker, else found by `ADMIT`, which keeps looking at an account with
 *   jobs behind a group while it has jobs in flight ({@link ORDER_RECHECK_MS}).
 *
 * - **Obliterated.** BullMQ's `obliterate()` cannot see these keys; the queue's anchor (anchor.ts)
 *   tells the scripts, which then drop them: none of their jobs is sent.
 *
 * Keys: the outbox's own (outbox-keys.ts: all under `oa:` in the queue's prefix, joined the same way
 * inside the scripts); BullMQ's are only read. A script touches the queue's keys and those of its
 * accounts, so that a hash tag in the queue's prefix keeps each script on one slot of a Redis Cluster.
 */
import type { Queue } from 'bullmq';
import { sleep } from '../../core/call-control.js';
import type { RedisClient } from '../../redis/client.js';
import { runScript, script } from '../../redis/script.js';
import { NOW } from '../../redis/scripts.js';
import { VOID } from './anchor.js';
import { ANCHOR_ID, accountKeys, accountTag, groupTag, outboxKeys, recordKey } from './keys.js';
import { KEEP_END, type Told, tellArgs } from './record.js';

/** An account's jobs in flight across every worker, at most: admitted and not ended. */
const ACCOUNT_CAP = 3;

/** Of them, `bulk` jobs at most: the rest of the cap is kept for the account's other jobs. */
const BULK_CAP = 2;

/** How soon an account at its cap is looked at again, when none of its jobs told it ended. */
const RECHECK_MS = 100;

/**
 * How soon an account with nothing in its lanes is looked at again while it has jobs in flight and jobs
 * waiting behind an order group: a holder whose end no worker told (its worker died, and BullMQ ended
 * the job later) is then found ended, and its group's next job admitted. An end that is told advances
 * the group at once.
 */
const ORDER_RECHECK_MS = 1000;

/** The longest a dispatch loop sleeps with nothing to admit: a job added in another process waits no longer. */
const IDLE_MS = 200;

/** The outbox-wide keys of the turns (see outbox-keys.ts). */
const turnKeys = outboxKeys;

/**
 * The order groups of an account, as Lua functions that scripts include after `NOW` (they read `now`).
 * `k` is an account's base (`accountKeys(...).base`); its keys: `groups` (a hash: job id ->
 * `<lane>:<group tag>`, for each job of a group not ended), `holders` (a hash: group tag -> the id of
 * its job in a lane or in flight), `order:<group tag>` (a list: the ids behind the holder, in the order
 * added) and `queued` (those ids, scored as in a lane). A cancelled job behind the holder leaves `queued`
 * and `groups` only: the list skips it when its turn comes.
 *
 * - `orderAdvance(k, group, ready, tag)`: the group's next job still queued takes the holder's place in
 *   its lane, and the account is in `ready` by its due time; with none, the group is free.
 * - `orderEnded(k, id, ready, tag)`: job `id` ended (or was cancelled, or is gone): it leaves its group,
 *   and if it held it, the group advances. Safe to run twice, and a no-op for a job of no group.
 */
export const ORDER = `
local function orderAdvance(k, group, ready, tag)
  local list = k .. 'order:' .. group
  while true do
    local id = redis.call('LPOP', list)
    if not id then
      redis.call('HDEL', k .. 'holders', group)
      return
    end
    local score = redis.call('ZSCORE', k .. 'queued', id)
    if score then
      redis.call('ZREM', k .. 'queued', id)
      local entry = redis.call('HGET', k .. 'groups', id)
      local lane = 'lane'
      if entry then lane = string.sub(entry, 1, string.find(entry, ':', 1, true) - 1) end
      redis.call('ZADD', k .. lane, score, id)
      redis.call('HSET', k .. 'holders', group, id)
      redis.call('ZADD', ready, 'LT', math.max(now, math.floor(tonumber(score) / 1000)), tag)
      return
    end
  end
end
local function orderEnded(k, id, ready, tag)
  local entry = redis.call('HGET', k .. 'groups', id)
  if not entry then return end
  redis.call('HDEL', k .. 'groups', id)
  local group = string.sub(entry, string.find(entry, ':', 1, true) + 1)
  if redis.call('HGET', k .. 'holders', group) == id then
    orderAdvance(k, group, ready, tag)
  else
    -- A job behind the holder ended (cancelled): out of the group's list too, so that its key added
    -- again goes at the end, not in its old place.
    redis.call('LREM', k .. 'order:' .. group, 1, id)
  end
end
`;

// Stores jobs of accounts: each, unless its key is known (its record or BullMQ's job is there: then left
// as it is), as the outbox's own record of it (what BullMQ is given at its turn: its name, data and
// options), in its account's lane, its account's index and the outbox's `parked`, its account in
// `ready`; nothing of BullMQ's is written until its turn. A job and its lane are written in one step, so
// that no add that stops half-way leaves a job without its lane. A chunk's lanes and indexes are written
// in a few variadic commands (per account, then `parked` and `ready`): what an `addMany` of accounts
// costs is mostly this script. A lane's score is when its job is due, the later of its due time and now
// (ms, Redis's clock), times 1,000, plus its order in its chunk: of jobs due in the same ms, the first
// added goes first. A job of an order group ('' for none) becomes its group's holder and goes in its
// lane when the group has none, else it waits behind it (see ORDER): in `queued` and at the end of the
// group's list, in no lane. A queue whose anchor is gone (obliterated) first drops what the outbox kept
// (VOID).
// KEYS: ready, parked, accounts, anchored. ARGV: queue prefix, account base, record base, then per job:
// tag, id, due (ms, 0: now), index, lane ('lane' or 'bulk'), name, data, opts, group tag. Answers
// whether the queue is anchored (1 or 0), then per job 1 if its key was known, else 0.
const STORE = script(`${NOW}${VOID}
local prefix, base, recordBase = ARGV[1], ARGV[2], ARGV[3]
voided(prefix)
-- A command's arguments go in slices: Lua's unpack is bounded.
local function zadd(key, flag, list)
  for s = 1, #list, 1000 do redis.call('ZADD', key, flag, unpack(list, s, math.min(s + 999, #list))) end
end
local known, tags, byTag, parked = {}, {}, {}, {}
for i = 4, #ARGV, 9 do
  local tag, id, due, lane = ARGV[i], ARGV[i + 1], math.max(now, tonumber(ARGV[i + 2])), ARGV[i + 4]
  local score = due * 1000 + tonumber(ARGV[i + 3]) % 1000
  local recordKey = recordBase .. id
  if redis.call('EXISTS', recordKey) == 1 or redis.call('EXISTS', prefix .. id) == 1 then
    known[#known + 1] = 1
  else
    known[#known + 1] = 0
    redis.call('HSET', recordKey, 'name', ARGV[i + 5], 'data', ARGV[i + 6], 'opts', ARGV[i + 7], 'at', now)
    local g = byTag[tag]
    if not g then
      g = { lane = {}, bulk = {}, jobs = {}, first = nil }
      byTag[tag] = g
      tags[#tags + 1] = tag
    end
    local behind = false
    local group = ARGV[i + 8]
    if group ~= '' then
      local k = base .. tag .. ':'
      redis.call('HSET', k .. 'groups', id, lane .. ':' .. group)
      if redis.call('HSETNX', k .. 'holders', group, id) == 0 then
        behind = true
        g.behind = true
        redis.call('RPUSH', k .. 'order:' .. group, id)
        redis.call('ZADD', k .. 'queued', score, id)
      end
    end
    if not behind then
      local l = g[lane]
      l[#l + 1] = score
      l[#l + 1] = id
      if not g.first or due < g.first then g.first = due end
    end
    g.jobs[#g.jobs + 1] = now
    g.jobs[#g.jobs + 1] = id
    parked[#parked + 1] = score
    parked[#parked + 1] = id
  end
end
local ready = {}
for _, tag in ipairs(tags) do
  local g = byTag[tag]
  local k = base .. tag .. ':'
  for _, name in ipairs({ 'lane', 'bulk' }) do if #g[name] > 0 then zadd(k .. name, 'NX', g[name]) end end
  zadd(k .. 'jobs', 'NX', g.jobs)
  -- An account with jobs only behind a group is looked at too: its holder's end may go untold.
  local first = g.first or (g.behind and now)
  if first then
    ready[#ready + 1] = first
    ready[#ready + 1] = tag
  end
end
zadd(KEYS[2], 'NX', parked)
zadd(KEYS[1], 'LT', ready)
-- The accounts' index keeps the time each was first seen: 'NX' leaves it.
local seen = {}
for _, tag in ipairs(tags) do
  seen[#seen + 1] = now
  seen[#seen + 1] = tag
end
zadd(KEYS[3], 'NX', seen)
table.insert(known, 1, redis.call('EXISTS', KEYS[4]))
return known`);

/** A job of an account as `storeParked` stores it: what BullMQ is given at its turn, and its place in its lanes. */
export interface ParkedJob {
  account: string;
  id: string;
  /** When it is due (ms on Redis's clock; 0 or a time past: now). */
  due: number;
  /** Its order in its chunk: of jobs due in the same ms, the first added goes first. */
  index: number;
  bulk: boolean;
  /** Its order group (`orderGroup`): admitted only once the group's jobs added before it ended. */
  orderGroup?: string | undefined;
  /** What BullMQ's `Queue.add` is given at its turn: the job's name, its data and options as JSON. */
  name: string;
  data: string;
  opts: string;
}

/**
 * Stores jobs of accounts in their lanes, their accounts in `ready`, in one script for the chunk (see
 * `STORE`). Answers, for each job, whether its key was known (and so left as it was), and whether the
 * queue is anchored (see anchor.ts).
 */
export async function storeParked(
  redis: RedisClient,
  keyPrefix: string,
  jobs: readonly ParkedJob[],
): Promise<{ known: boolean[]; anchored: boolean }> {
  if (jobs.length === 0) return { known: [], anchored: true };
  const keys = turnKeys(keyPrefix);
  const args: (string | number)[] = [keyPrefix, keys.accountBase, keys.recordBase];
  // A chunk's jobs are often of a few accounts (a campaign's): each account's tag made once.
  const tags = new Map<string, string>();
  for (const job of jobs) {
    let tag = tags.get(job.account);
    if (tag === undefined) {
      tag = accountTag(job.account);
      tags.set(job.account, tag);
    }
    const lane = job.bulk ? 'bulk' : 'lane';
    const group = job.orderGroup === undefined ? '' : groupTag(job.orderGroup);
    args.push(tag, job.id, job.due, job.index, lane, job.name, job.data, job.opts, group);
  }
  const [anchored, ...known] = (await runScript(
    redis,
    STORE,
    [keys.ready, keys.parked, keys.accounts, keys.anchored],
    args,
  )) as number[];
  return { known: known.map((n) => Number(n) === 1), anchored: Number(anchored) === 1 };
}

// One turn: the account at the head of `ready`, if its time has come, gives one job (its `lane` first,
// `bulk` only under BULK_CAP) and goes to the tail; an account with nothing it may send now is scored
// for when it may (a due time, its cap, a pause), or leaves `ready`. A job given is in its account's
// `inflight` and in `handing` (the outbox's keys) and is answered, with what BullMQ's `Queue.add` is
// given, for the dispatcher to hand to BullMQ; `handing` keeps it until BullMQ has it, so that a
// dispatcher that stopped in between is made up for: a job in `handing` for longer than the stale ms
// (its record there, never sent nor ended, and not in BullMQ) is answered again (BullMQ's add of a job
// id it keeps is a no-op). A queue whose anchor is gone (obliterated) first drops what the outbox kept.
// KEYS: ready, parked, wait, handing, completed, failed (BullMQ's `wait`, `completed` and `failed`
// are only read).
// ARGV: queue prefix, account base, cap, bulk cap, most jobs waiting, recheck ms, the one account
// served ('' for every account), the order recheck ms, the record base, the stale ms, how long a
// record is kept, the fewest places worth a turn, then the ids BullMQ took from the loop's last turn
// (they leave \`handing\` first). A job of an order group found ended (or gone) here, its end not told
// by a worker, lets its group's next job into its lane (ORDER).
// Gives jobs, one per account in turn, until BullMQ's wait list and `handing` hold `most jobs waiting`;
// none while fewer places than the fewest worth a turn are free.
// Answers {jobs, ms, short}: jobs as id, name, data, opts, id, ...; look again in ms (0: at once, -1:
// nobody is ready), or once `short` more places are free.
const ADMIT = script(`${NOW}${ORDER}${VOID}
local prefix, base, recordBase = ARGV[1], ARGV[2], ARGV[9]
local cap, bulkCap, maxWait, recheck = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local out = {}
if voided(prefix) then return {out, -1} end
-- The jobs BullMQ took from this loop's last turn (ARGV[13..]) leave \`handing\`.
for i = 13, #ARGV, 1000 do redis.call('ZREM', KEYS[4], unpack(ARGV, i, math.min(i + 999, #ARGV))) end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[10]), 'LIMIT', 0, 100)) do
  local f = redis.call('HMGET', recordBase .. id, 'name', 'data', 'opts', 'sent', 'end')
  if f[1] and not f[4] and not f[5] and redis.call('EXISTS', prefix .. id) == 0 then
    redis.call('ZADD', KEYS[4], now, id)
    out[#out + 1] = id
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
    out[#out + 1] = f[3]
  else
    redis.call('ZREM', KEYS[4], id)
  end
end
local room = maxWait - redis.call('LLEN', KEYS[3]) - redis.call('ZCARD', KEYS[4])
local least = tonumber(ARGV[12])
if room < least then return {out, 20, least - room} end
local admitted = 0
for _ = 1, 25 + room do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if ARGV[7] ~= '' then
    local score = redis.call('ZSCORE', KEYS[1], ARGV[7])
    head = score and {ARGV[7], score} or {}
  end
  if #head == 0 then return {out, -1} end
  local tag, at = head[1], tonumber(head[2])
  if at > now then return {out, at - now} end
  local k = base .. tag .. ':'
  -- Held or paused: one call tells that it is neither (most turns), then which.
  local stopped = redis.call('EXISTS', k .. 'held', k .. 'pause') > 0
  local paused = stopped and redis.call('PTTL', k .. 'pause') or 0
  if stopped and redis.call('EXISTS', k .. 'held') == 1 then
    -- Held by an operator: out of the turns until \`resume\` puts it back (an add puts it back too,
    -- and is taken out again here).
    redis.call('ZREM', KEYS[1], tag)
  elseif paused > 0 then
    redis.call('ZADD', KEYS[1], now + paused, tag)
  else
    local inflight = k .. 'inflight'
    local n = 0
    for _, id in ipairs(redis.call('ZRANGE', inflight, 0, -1)) do
      if redis.call('ZSCORE', KEYS[5], id) or redis.call('ZSCORE', KEYS[6], id)
        or redis.call('EXISTS', recordBase .. id) == 0
        or (redis.call('EXISTS', prefix .. id) == 0 and not redis.call('ZSCORE', KEYS[4], id)) then
        redis.call('ZREM', inflight, id)
        orderEnded(k, id, KEYS[1], tag)
      else
        n = n + 1
      end
    end
    local pick, nextAt = nil, nil
    -- The bulk lane is read only when the lane gives nothing now.
    for _, lane in ipairs({ {k .. 'lane', cap}, {k .. 'bulk', bulkCap} }) do
      local first = not pick and redis.call('ZRANGE', lane[1], 0, 0, 'WITHSCORES') or {}
      if #first > 0 then
        local due = math.floor(tonumber(first[2]) / 1000)
        local when = due
        if due <= now then
          if n < lane[2] then pick = {lane[1], first[1]} else when = now + recheck end
        end
        if not pick and (not nextAt or when < nextAt) then nextAt = when end
      end
    end
    if pick then
      local id = pick[2]
      redis.call('ZREM', pick[1], id)
      redis.call('ZREM', KEYS[2], id)
      redis.call('ZADD', KEYS[1], now, tag)
      local f = redis.call('HMGET', recordBase .. id, 'name', 'data', 'opts')
      if f[1] then
        redis.call('PEXPIRE', recordBase .. id, ARGV[11])
        redis.call('ZADD', KEYS[4], now, id)
        redis.call('ZADD', inflight, now, id)
        out[#out + 1] = id
        out[#out + 1] = f[1]
        out[#out + 1] = f[2]
        out[#out + 1] = f[3]
        admitted = admitted + 1
        -- The wait list is full: the next turn once the fewest places worth one are free again.
        if admitted >= room then return {out, 20, least} end
      else
        orderEnded(k, id, KEYS[1], tag)
      end
    elseif nextAt then
      redis.call('ZADD', KEYS[1], nextAt, tag)
    elseif n > 0 and redis.call('ZCARD', k .. 'queued') > 0 then
      -- Jobs wait behind a group whose holder is in flight: looked at again, in case its end is not told.
      redis.call('ZADD', KEYS[1], now + tonumber(ARGV[8]), tag)
    else
      redis.call('ZREM', KEYS[1], tag)
    end
  end
end
return {out, 0}`);

// A job of the account ended: its record keeps how (KEYS[3]: ARGV[4], unless it ended unknown, kept
// ARGV[5] ms), its outcome event is told (KEYS[4], ARGV[6..8]), its place in flight is free, and the
// account may take a turn now. A job of an order group (ARGV[3]: the account's base, else '') lets the
// group's next job into its lane.
const RELEASE = script(`${NOW}${ORDER}${KEEP_END}
keepEnd(KEYS[3], ARGV[4], ARGV[5])
tell(KEYS[4], ARGV[6], ARGV[7], ARGV[8])
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('ZADD', KEYS[2], 'LT', now, ARGV[2]) end
if ARGV[3] ~= '' then orderEnded(ARGV[3], ARGV[1], KEYS[2], ARGV[2]) end
return 1`);

/**
 * A job of `account` ended (`end`: how, kept on its record for `recordTtlMs`, and its outcome event,
 * told in the same step): gives back its place in flight; `ordered`: the job was added with an
 * `orderGroup`, whose next job is then admitted.
 */
export async function release(
  redis: RedisClient,
  keyPrefix: string,
  account: string,
  id: string,
  end: { state: 'delivered' | 'failed'; recordTtlMs: number; ordered: boolean; told: Told },
) {
  const a = accountKeys(keyPrefix, account);
  const { events, ready } = turnKeys(keyPrefix);
  await runScript(
    redis,
    RELEASE,
    [a.inflight, ready, recordKey(keyPrefix, id), events],
    [id, accountTag(account), end.ordered ? a.base : '', end.state, end.recordTtlMs, ...tellArgs(end.told)],
  );
}

// The account's login was refused: none of its jobs is admitted for `ms`.
const PAUSE = script(`${NOW}
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
redis.call('ZADD', KEYS[2], 'GT', now + tonumber(ARGV[1]), ARGV[2])
return 1`);

/** Pauses `account`'s turns for `ms`. */
export async function pauseAccount(redis: RedisClient, keyPrefix: string, account: string, ms: number) {
  const keys = [accountKeys(keyPrefix, account).pause, turnKeys(keyPrefix).ready];
  await runScript(redis, PAUSE, keys, [Math.max(1, Math.ceil(ms)), accountTag(account)]);
}

// Where each kept job of one account stands (ids whose record is gone, past their retention, are
// dropped): {waiting, delayed, active, orphaned, delivered, failed, unknown}, the ids not final, whether
// the account is held (1 or 0), and how long its oldest job due in its lanes has waited (ms, -1: none).
// How a job ended is read from its record, else from BullMQ's sets (read only: a worker that died
// before it kept the end).
// KEYS: jobs, lane, bulk, completed, failed, delayed, active, unknown, queued (behind an order group),
// held. ARGV: queue prefix, record base, 1 to list.
const ACCOUNT_STATES = script(`${NOW}${VOID}
local c = {0, 0, 0, 0, 0, 0, 0}
local open = {}
if voided(ARGV[1]) then return {c, open, 0, -1} end
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local ended = redis.call('HGET', ARGV[2] .. id, 'end')
  if redis.call('EXISTS', ARGV[2] .. id) == 0 then redis.call('ZREM', KEYS[1], id)
  elseif ended == 'delivered' or redis.call('ZSCORE', KEYS[4], id) then c[5] = c[5] + 1
  elseif ended == 'unknown' then c[7] = c[7] + 1
  elseif ended == 'failed' then c[6] = c[6] + 1
  elseif redis.call('ZSCORE', KEYS[5], id) then
    if redis.call('ZSCORE', KEYS[8], id) then c[7] = c[7] + 1 else c[6] = c[6] + 1 end
  else
    if ARGV[3] == '1' then open[#open + 1] = id end
    local s = redis.call('ZSCORE', KEYS[2], id) or redis.call('ZSCORE', KEYS[3], id)
      or redis.call('ZSCORE', KEYS[9], id)
    if s then
      if math.floor(tonumber(s) / 1000) > now then c[2] = c[2] + 1 else c[1] = c[1] + 1 end
    elseif redis.call('ZSCORE', KEYS[6], id) then c[2] = c[2] + 1
    elseif redis.call('EXISTS', ARGV[1] .. id .. ':lock') == 1 then c[3] = c[3] + 1
    elseif redis.call('LPOS', KEYS[7], id) then c[4] = c[4] + 1
    else c[1] = c[1] + 1 end
  end
end
local oldest = -1
for _, lane in ipairs({ KEYS[2], KEYS[3] }) do
  local first = redis.call('ZRANGE', lane, 0, 0, 'WITHSCORES')
  if #first > 0 then
    local due = math.floor(tonumber(first[2]) / 1000)
    if due <= now and now - due > oldest then oldest = now - due end
  end
end
return {c, open, redis.call('EXISTS', KEYS[10]), oldest}`);

/** The states of the jobs of one account, and (with `list`) the ids of those not final. */
export async function accountStates(
  redis: RedisClient,
  keyPrefix: string,
  queue: Queue,
  account: string,
  list = false,
): Promise<{ counts: number[]; open: string[]; held: boolean; oldestWaitingMs: number | undefined }> {
  const a = accountKeys(keyPrefix, account);
  const keys = [
    a.jobs,
    a.lane,
    a.bulk,
    queue.toKey('completed'),
    queue.toKey('failed'),
    queue.toKey('delayed'),
    queue.toKey('active'),
    turnKeys(keyPrefix).unknown,
    a.queued,
    a.held,
  ];
  const [counts, open, held, oldest] = (await runScript(redis, ACCOUNT_STATES, keys, [
    keyPrefix,
    turnKeys(keyPrefix).recordBase,
    list ? '1' : '0',
  ])) as [number[], string[], number, number];
  const oldestMs = Number(oldest);
  return {
    counts: counts.map(Number),
    open,
    held: Number(held) === 1,
    oldestWaitingMs: oldestMs < 0 ? undefined : oldestMs,
  };
}

// An operator holds the account (KEYS: held): none of its jobs is admitted, nor started, until resumed.
const HOLD = script(`redis.call('SET', KEYS[1], '1')
return 1`);

// The account is resumed (KEYS: held, ready, lane, bulk, queued): back in the turns at once if it has
// work (jobs behind an order group included: their holder's end may have gone untold meanwhile).
const UNHOLD = script(`${NOW}
redis.call('DEL', KEYS[1])
if redis.call('ZCARD', KEYS[3]) + redis.call('ZCARD', KEYS[4]) + redis.call('ZCARD', KEYS[5]) > 0 then
  redis.call('ZADD', KEYS[2], 'LT', now, ARGV[1])
end
return 1`);

/** Holds `account` (`held`), or resumes it: its jobs stay where they are, none starts while held. */
export async function holdAccount(redis: RedisClient, keyPrefix: string, account: string, held: boolean) {
  const a = accountKeys(keyPrefix, account);
  if (held) await runScript(redis, HOLD, [a.held], []);
  else {
    await runScript(
      redis,
      UNHOLD,
      [a.held, turnKeys(keyPrefix).ready, a.lane, a.bulk, a.queued],
      [accountTag(account)],
    );
  }
}

// The members of sorted sets (KEYS), one list each.
const MEMBERS = script(`local out = {}
for i, key in ipairs(KEYS) do out[i] = redis.call('ZRANGE', key, 0, -1) end
return out`);

async function members(redis: RedisClient, keys: readonly string[]): Promise<string[][]> {
  return (await runScript(redis, MEMBERS, keys, [])) as string[][];
}

/** Every account that stored a job in the outbox, oldest first (its index; see `turnKeys`). */
export async function knownAccounts(redis: RedisClient, keyPrefix: string): Promise<string[]> {
  const [tags = []] = await members(redis, [turnKeys(keyPrefix).accounts]);
  return tags.map((tag) => decodeURIComponent(tag));
}

// Forgets accounts (ARGV[2..]: their tags) from the index (KEYS[1]) that still keep no job and are not
// held, checked here: a job added since they were read keeps its account listed. ARGV[1]: account base.
const FORGET = script(`for i = 2, #ARGV do
  local k = ARGV[1] .. ARGV[i] .. ':'
  if redis.call('ZCARD', k .. 'jobs') == 0 and redis.call('EXISTS', k .. 'held') == 0 then
    redis.call('ZREM', KEYS[1], ARGV[i])
  end
end
return 1`);

/** Forgets accounts that keep no job any more (all gone past their retention) from the index. */
export async function forgetAccounts(redis: RedisClient, keyPrefix: string, accounts: readonly string[]) {
  if (accounts.length === 0) return;
  const keys = turnKeys(keyPrefix);
  await runScript(redis, FORGET, [keys.accounts], [keys.accountBase, ...accounts.map(accountTag)]);
}

// The ids of an account's jobs waiting for their turn, those behind an order group's holder first, then
// those in its lanes. KEYS: queued, groups, lane, bulk. ARGV: the lane wanted ('lane', 'bulk', '' for both).
const WAITING_IDS = script(`local behind, lanes = {}, {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local entry = redis.call('HGET', KEYS[2], id) or 'lane:'
  local lane = string.sub(entry, 1, string.find(entry, ':', 1, true) - 1)
  if ARGV[1] == '' or ARGV[1] == lane then behind[#behind + 1] = id end
end
for i, name in ipairs({ 'lane', 'bulk' }) do
  if ARGV[1] == '' or ARGV[1] == name then
    for _, id in ipairs(redis.call('ZRANGE', KEYS[2 + i], 0, -1)) do lanes[#lanes + 1] = id end
  end
end
return {behind, lanes}`);

/**
 * The ids of `account`'s jobs waiting for their turn (`bulk`: only its campaign's; `false`, only the
 * others; unset, both), for a cancel of them all: those behind an order group's holder (`behind`), to
 * cancel before those in its lanes, so that a holder cancelled never hands its place to one of them.
 */
export async function laneIds(
  redis: RedisClient,
  keyPrefix: string,
  account: string,
  bulk: boolean | undefined,
): Promise<{ behind: string[]; lanes: string[] }> {
  const a = accountKeys(keyPrefix, account);
  const lane = bulk === true ? 'bulk' : bulk === false ? 'lane' : '';
  const keys = [a.queued, `${a.base}groups`, a.lane, a.bulk];
  const [behind, lanes] = (await runScript(redis, WAITING_IDS, keys, [lane])) as [string[], string[]];
  return { behind, lanes };
}

// Where a parked job is: 'waiting' (due) or 'delayed' (not yet) in its account's lanes or behind its
// order group (KEYS: lane, bulk, queued), or 'waiting' while it is handed to BullMQ (KEYS[4]: handing,
// its BullMQ job not there yet), else nothing. ARGV: the job id, the queue prefix.
const LANE_OF = script(`${NOW}${VOID}
if voided(ARGV[2]) then return false end
local score = redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[2], ARGV[1])
  or redis.call('ZSCORE', KEYS[3], ARGV[1])
if not score then
  if redis.call('ZSCORE', KEYS[4], ARGV[1]) and redis.call('EXISTS', ARGV[2] .. ARGV[1]) == 0 then return 'waiting' end
  return false
end
return math.floor(tonumber(score) / 1000) > now and 'delayed' or 'waiting'`);

/**
 * Whether a job of `account` is parked, waiting for its account's turn: `waiting` (due) or `delayed`
 * (not yet), in its lanes or behind its order group, or being handed to BullMQ; `undefined` when it
 * is not (BullMQ has it, or it is not stored). A job leaves its lane only forwards (admitted or
 * cancelled), `queued` only for its lane, and `handing` once BullMQ has it, so a job found in none is
 * read from BullMQ after.
 */
export async function parkedState(
  redis: RedisClient,
  keyPrefix: string,
  account: string,
  id: string,
): Promise<'waiting' | 'delayed' | undefined> {
  const a = accountKeys(keyPrefix, account);
  const keys = [a.lane, a.bulk, a.queued, turnKeys(keyPrefix).handing];
  const state = await runScript(redis, LANE_OF, keys, [id, keyPrefix]);
  return state === 'waiting' || state === 'delayed' ? state : undefined;
}

// How many parked jobs there are (KEYS[1]), how many of them are due (those being handed to BullMQ,
// KEYS[3], not there yet, among them), and whether the queue's anchor is among BullMQ's delayed jobs
// (KEYS[2], read): BullMQ's count of them leaves it out. ARGV: the queue prefix.
const PARKED = script(`${NOW}${VOID}
voided(ARGV[1])
local anchor = redis.call('ZSCORE', KEYS[2], '${ANCHOR_ID}') and 1 or 0
local handing = 0
for _, id in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
  if redis.call('EXISTS', ARGV[1] .. id) == 0 then handing = handing + 1 end
end
return {redis.call('ZCARD', KEYS[1]) + handing, redis.call('ZCOUNT', KEYS[1], '-inf', now * 1000 + 999) + handing,
  anchor}`);

/**
 * How many parked jobs are due (`waiting`) and how many are not yet (`delayed`), all accounts, and how
 * many of BullMQ's delayed jobs are the queue's anchor (0 or 1: see anchor.ts).
 */
export async function parkedCounts(redis: RedisClient, keyPrefix: string, delayedKey: string) {
  const [all, due, anchor] = (await runScript(
    redis,
    PARKED,
    [turnKeys(keyPrefix).parked, delayedKey, turnKeys(keyPrefix).handing],
    [keyPrefix],
  )) as [number, number, number];
  return { due: Number(due), notYet: Number(all) - Number(due), anchor: Number(anchor) };
}

// A page of the parked jobs (KEYS[1]: parked) in the order they are due: those due now (ARGV[1]
// 'waiting') or not yet (else), ARGV[2] of them skipped, at most ARGV[3] (-1: all), each as its id, then
// its record's name, data, options and when it was added. ARGV[4]: the queue prefix, ARGV[5]: the record
// base.
const PARKED_PAGE = script(`${NOW}${VOID}
if voided(ARGV[4]) then return {} end
local edge = ms(now * 1000 + 999)
local ids
if ARGV[1] == 'waiting' then
  ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', edge, 'LIMIT', ARGV[2], ARGV[3])
else
  ids = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. edge, '+inf', 'LIMIT', ARGV[2], ARGV[3])
end
local out = {}
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', ARGV[5] .. id, 'name', 'data', 'opts', 'at')
  if f[1] then
    out[#out + 1] = id
    out[#out + 1] = f[1]
    out[#out + 1] = f[2]
    out[#out + 1] = f[3]
    out[#out + 1] = f[4] or '0'
  end
end
return out`);

/** A parked job as its record keeps it: what BullMQ is given at its turn, and when it was added. */
export interface ParkedRecord {
  id: string;
  name: string;
  /** Its data, as JSON. */
  data: string;
  /** Its BullMQ options, as JSON. */
  opts: string;
  /** When it was added (ms, Redis's clock). */
  at: number;
}

// A job's record while it waits for its turn (KEYS[1]: parked, read): its name, data, options and when
// it was added; nothing once admitted (BullMQ has it then) or gone. ARGV: the id, the record base.
const PARKED_RECORD = script(`if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return false end
local f = redis.call('HMGET', ARGV[2] .. ARGV[1], 'name', 'data', 'opts', 'at')
if not f[1] then return false end
return {f[1], f[2], f[3], f[4] or '0'}`);

/** The record of job `id` while it waits for its account's turn (parked), else `undefined`. */
export async function parkedRecord(
  redis: RedisClient,
  keyPrefix: string,
  id: string,
): Promise<ParkedRecord | undefined> {
  const keys = turnKeys(keyPrefix);
  const f = (await runScript(redis, PARKED_RECORD, [keys.parked], [id, keys.recordBase])) as string[] | null;
  if (!f) return undefined;
  return { id, name: f[0] as string, data: f[1] as string, opts: f[2] as string, at: Number(f[3]) };
}

/**
 * A page of the parked jobs, all accounts, in the order they are due: those due (`waiting`, as
 * {@link parkedCounts} counts them) or not yet (`delayed`); `skip` of them skipped, at most `take`
 * (`Infinity`: all the rest). One cancelled meanwhile is left out.
 */
export async function parkedRecords(
  redis: RedisClient,
  keyPrefix: string,
  state: 'waiting' | 'delayed',
  skip: number,
  take: number,
): Promise<ParkedRecord[]> {
  if (take <= 0) return [];
  const count = Number.isFinite(take) ? take : -1;
  const keys = turnKeys(keyPrefix);
  const flat = (await runScript(
    redis,
    PARKED_PAGE,
    [keys.parked],
    [state, skip, count, keyPrefix, keys.recordBase],
  )) as string[];
  const out: ParkedRecord[] = [];
  for (let i = 0; i < flat.length; i += 5) {
    out.push({
      id: flat[i] as string,
      name: flat[i + 1] as string,
      data: flat[i + 2] as string,
      opts: flat[i + 3] as string,
      at: Number(flat[i + 4]),
    });
  }
  return out;
}

/** How long a job may stay in `handing` before a dispatch loop hands it to BullMQ again. */
const HANDOFF_STALE_MS = 5000;

/**
 * The dispatch loop of one worker process: admits jobs in turns across accounts and hands them to
 * BullMQ (`Queue.addBulk`, each under its job id: an add that is made again is a no-op), keeping
 * BullMQ's wait list at most twice `concurrency` long and refilling it once `concurrency` places are
 * free: BullMQ's `addBulk` costs less a job the more jobs it is given (a `MULTI` a call), and the
 * worker always has a full wait list to take from. With nothing to admit it sleeps until the next
 * account's time, at most {@link IDLE_MS}; `wake()` (a job added in this process) ends the sleep at
 * once, `freed()` (a job of this process ended) once enough places are free.
 */
export class Dispatcher {
  #stopped = false;
  #nap: { wake(): void } | undefined;
  readonly #done: Promise<void>;
  /** The ids BullMQ took in the last turn: they leave `handing` in the next (one call fewer a turn). */
  #handed: string[] = [];
  /** Jobs ended in this process since the last turn began. */
  #freed = 0;
  /** A job was added in this process since the last turn began (the turn may not have seen it). */
  #added = false;
  /**
   * How many more places the last turn found it needs free (0: none): the loop sleeps until that many
   * jobs ended, and a job added meanwhile waits for them (or the loop's time).
   */
  #short = 0;

  constructor(
    private readonly redis: () => Promise<RedisClient>,
    private readonly keyPrefix: string,
    private readonly queue: () => Promise<Queue>,
    private readonly concurrency: number,
    /** How long a job's record is kept once it is handed to BullMQ (its retention and more). */
    private readonly recordTtlMs: number,
    private readonly only?: string,
  ) {
    this.#done = this.#run();
  }

  /**
   * A job was added in this process: a turn now (or, during a turn, right after it); while too few
   * places are free, once they are.
   */
  wake(): void {
    this.#added = true;
    if (this.#short === 0) this.#nap?.wake();
  }

  /** A job of this process ended: a turn once enough places are free (else at the loop's time). */
  freed(): void {
    if (++this.#freed >= Math.max(1, this.#short)) this.#nap?.wake();
  }

  /**
   * One turn: the jobs admitted, handed to BullMQ; how long to wait before the next (0: at once), and
   * how many more places must be free before a turn is worth it.
   */
  async #turn(): Promise<[asked: number, short: number]> {
    const keys = turnKeys(this.keyPrefix);
    const [redis, queue] = await Promise.all([this.redis(), this.queue()]);
    this.#freed = 0;
    this.#added = false;
    const [jobs, asked, short] = (await runScript(
      redis,
      ADMIT,
      [
        keys.ready,
        keys.parked,
        queue.toKey('wait'),
        keys.handing,
        queue.toKey('completed'),
        queue.toKey('failed'),
      ],
      [
        this.keyPrefix,
        keys.accountBase,
        ACCOUNT_CAP,
        BULK_CAP,
        2 * this.concurrency,
        RECHECK_MS,
        this.only === undefined ? '' : accountTag(this.only),
        ORDER_RECHECK_MS,
        keys.recordBase,
        HANDOFF_STALE_MS,
        this.recordTtlMs,
        this.concurrency,
        ...this.#handed,
      ],
    )) as [string[], number, number?];
    this.#handed = [];
    if (jobs.length > 0) {
      const ids: string[] = [];
      const adds = [];
      for (let i = 0; i < jobs.length; i += 4) {
        const id = jobs[i] as string;
        ids.push(id);
        const opts = JSON.parse(jobs[i + 3] as string) as Record<string, unknown>;
        opts.jobId = id;
        adds.push({ name: jobs[i + 1] as string, data: JSON.parse(jobs[i + 2] as string), opts });
      }
      // Should this fail, the jobs stay in `handing`: a dispatch loop hands them again.
      await queue.addBulk(adds as never);
      this.#handed = ids;
    }
    return [Number(asked), Number(short ?? 0)];
  }

  async #run(): Promise<void> {
    let failures = 0;
    while (!this.#stopped) {
      let waitMs: number;
      try {
        const [asked, short] = await this.#turn();
        failures = 0;
        this.#short = short;
        // More to look at now (the wait list had room left, or more accounts to look at), a job added
        // while the turn ran (with places free), or enough jobs of this process ended meanwhile.
        if (asked === 0 || (this.#added && short === 0) || (short > 0 && this.#freed >= short)) continue;
        waitMs = asked < 0 ? IDLE_MS : Math.min(IDLE_MS, Math.max(1, asked));
      } catch {
        // Redis away: the loop goes on once it is back (the worker's own connection waits for it).
        waitMs = Math.min(5000, 100 * 2 ** failures++);
      }
      if (this.#stopped) break;
      const nap = sleep(waitMs, undefined, 'waiting for a turn');
      this.#nap = nap;
      await nap.done;
      this.#nap = undefined;
    }
  }

  /**
   * Stops admitting. Does not wait for a call to Redis in flight (a Redis that is down cannot hold a
   * shutdown): a job it admitted is handed to BullMQ by this loop if it can, else by another's.
   */
  stop(): void {
    this.#stopped = true;
    this.#nap?.wake();
    this.#done.catch(() => {});
  }
}
