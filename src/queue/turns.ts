/**
 * One outbox for every account: fair turns, each account's quota used, replies ahead of campaigns.
 *
 * The design, on open-source BullMQ and Redis (BullMQ's groups are a Pro feature; a queue and a worker
 * per account cost connections and polling for every idle account):
 *
 * - **One BullMQ queue**, the outbox's own. A job with an `account` is a plain BullMQ job of that
 *   queue (id `a-<account>/<key>`: keys unique per account), so that everything the outbox does for
 *   one job holds as it is: the at-most-once record, `unknown`/`failed`/`delivered`, retries with
 *   backoff, the stalled check, tracing, events, retention. Until its turn it is **parked**: its hash
 *   is stored as BullMQ stores a job's (so `get`, a known key and `cancel` read it as one), but its id
 *   is in none of BullMQ's lists, so no BullMQ worker can take it; it is written by one script of
 *   ours for a whole chunk ({@link STORE}), not one of BullMQ's per job.
 * - **Lanes.** Its id is in one of the account's two lanes (sorted sets scored by when it is
 *   due, then by the order added): `lane` for ordinary jobs, `bulk` for `bulk: true`. An account with
 *   a job in a lane is in **`ready`**, one sorted set for the outbox scored by when the account may
 *   next be served. Nothing else is kept per account; an account with nothing queued is in no
 *   structure a worker reads, so 10,000 idle accounts cost what 1 does.
 * - **Turns.** Each worker process runs one dispatch loop: one script ({@link ADMIT}) takes the account
 *   at the head of `ready` whose time has come, moves one job from its lanes into BullMQ's wait list
 *   (as BullMQ's own `promote` does) and puts the account back at the tail of `ready` (scored now):
 *   accounts with work take turns, one job each, in every process alike. BullMQ's worker then runs
 *   the job as any other. The wait list is kept short (at most the worker's `concurrency`), so a job
 *   admitted for a small account starts after a few jobs, whatever the backlog of the others.
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
 * - **Crashes.** Admission is one script (a job is in a lane or in the wait list, never lost between);
 *   a job's place in `inflight` is given back by its worker when it ends, and else dropped by `ADMIT`
 *   once the job is final or gone (a worker that died): nothing leaks. So is an order group: its
 *   holder's end is told by its worker, else found by `ADMIT`, which keeps looking at an account with
 *   jobs behind a group while it has jobs in flight ({@link ORDER_RECHECK_MS}).
 *
 * Keys (all under the queue's prefix, built in {@link turnKeys} and {@link accountKeys} only, and
 * joined the same way inside `STORE` and `ADMIT`): a script touches the queue's own keys and those of
 * its accounts, so that a hash tag in the queue's prefix keeps each script on one slot of a Redis
 * Cluster.
 */
import type { Queue } from 'bullmq';
import { sleep } from '../core/call-control.js';
import type { RedisClient } from '../redis/client.js';
import { runScript, script } from '../redis/script.js';
import { NOW } from '../redis/scripts.js';

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

/** The outbox-wide keys of the turns. */
function turnKeys(keyPrefix: string) {
  return {
    /** The accounts with work, scored by when each may next be served (ms). */
    ready: `${keyPrefix}oa:ready`,
    /** Every parked job (its id, scored as in its lane): what `counts` reads as waiting or delayed. */
    parked: `${keyPrefix}oa:parked`,
    /** Where the accounts' keys start: `accountKeys` adds the account. */
    accountBase: `${keyPrefix}oa:acct:`,
    /** Every account that stored a job, scored by when it first did: what `outbox.accounts()` lists. */
    accounts: `${keyPrefix}oa:accounts`,
  };
}

/** An account's member in `ready`, and the part of its keys that names it. */
function accountTag(account: string): string {
  return encodeURIComponent(account);
}

/** The part of an order group's keys that names it (no `:`: `groups` values are `<lane>:<group>`). */
function groupTag(group: string): string {
  return encodeURIComponent(group);
}

/** The keys of one account. `ADMIT` joins `accountBase .. tag .. ':' .. name` the same way. */
function accountKeys(keyPrefix: string, account: string) {
  const base = `${turnKeys(keyPrefix).accountBase}${accountTag(account)}:`;
  return {
    lane: `${base}lane`,
    bulk: `${base}bulk`,
    inflight: `${base}inflight`,
    /** Every job of the account kept (for `counts` and `waitFor('all')` of one account). */
    jobs: `${base}jobs`,
    pause: `${base}pause`,
    /** Set by an operator (`outbox.pause({ account })`) until `resume`: none of its jobs starts. */
    held: `${base}held`,
    /** The jobs waiting behind their order group's holder, scored as in a lane. */
    queued: `${base}queued`,
    /** The account's base: the order groups' keys are made from it in the scripts ({@link ORDER}). */
    base,
  };
}

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

/**
 * A job's options as BullMQ keeps them in its hash (as its `optsAsJSON` writes them: the telemetry's
 * `metadata` as `tm`), so that BullMQ reads a parked job as one it stored.
 */
export function storedOpts(opts: Readonly<Record<string, unknown>>): string {
  const { telemetry, ...rest } = opts as { telemetry?: { metadata?: string } };
  return JSON.stringify(telemetry?.metadata === undefined ? rest : { ...rest, tm: telemetry.metadata });
}

// Stores jobs of accounts: each, unless its job is stored already (a known key, then left as it is),
// as BullMQ stores a job (its hash, the same fields), but in no list of BullMQ's: only in its
// account's lane, its account's index and the outbox's `parked`, its account in `ready`. A job and its
// lane are written in one step, so that no add that stops half-way leaves a job without its lane. A
// chunk's lanes and indexes are written in a few variadic commands (per account, then `parked` and
// `ready`), not a script of BullMQ's a job: what an `addMany` of accounts costs is mostly this script.
// A lane's score is when its job is due, the later of its due time and now (ms, Redis's clock), times
// 1,000, plus its order in its chunk: of jobs due in the same ms, the first added goes first. A job of
// an order group ('' for none) becomes its group's holder and goes in its lane when the group has
// none, else it waits behind it (see ORDER): in `queued` and at the end of the group's list, in no lane.
// KEYS: ready, parked, accounts. ARGV: account base, job prefix, then per job: tag, id, due (ms, 0: now), index,
// lane ('lane' or 'bulk'), name, data, opts, group tag. Answers, per job, 1 if its key was known, else 0.
const STORE = script(`${NOW}
local base, jobPrefix = ARGV[1], ARGV[2]
-- A command's arguments go in slices: Lua's unpack is bounded.
local function zadd(key, flag, list)
  for s = 1, #list, 1000 do redis.call('ZADD', key, flag, unpack(list, s, math.min(s + 999, #list))) end
end
local known, tags, byTag, parked = {}, {}, {}, {}
for i = 3, #ARGV, 9 do
  local tag, id, due, lane = ARGV[i], ARGV[i + 1], math.max(now, tonumber(ARGV[i + 2])), ARGV[i + 4]
  local score = due * 1000 + tonumber(ARGV[i + 3]) % 1000
  local jobKey = jobPrefix .. id
  if redis.call('EXISTS', jobKey) == 1 then
    known[#known + 1] = 1
  else
    known[#known + 1] = 0
    redis.call('HSET', jobKey, 'name', ARGV[i + 5], 'data', ARGV[i + 6], 'opts', ARGV[i + 7],
      'timestamp', now, 'delay', 0, 'priority', 0)
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
return known`);

/** A job of an account as `storeParked` stores it: BullMQ's fields of it, and its place in its lanes. */
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
  /** BullMQ's `name`, `data` and `opts` fields, as BullMQ would store them. */
  name: string;
  data: string;
  opts: string;
}

/**
 * Stores jobs of accounts in their lanes, their accounts in `ready`, in one script for the chunk (see
 * `STORE`). Answers, for each job, whether its key was known (and so left as it was).
 */
export async function storeParked(
  redis: RedisClient,
  keyPrefix: string,
  jobs: readonly ParkedJob[],
): Promise<boolean[]> {
  if (jobs.length === 0) return [];
  const keys = turnKeys(keyPrefix);
  const args: (string | number)[] = [keys.accountBase, keyPrefix];
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
  const known = (await runScript(redis, STORE, [keys.ready, keys.parked, keys.accounts], args)) as number[];
  return known.map((n) => Number(n) === 1);
}

// One turn: the account at the head of `ready`, if its time has come, gives one job to BullMQ's wait
// list (its `lane` first, `bulk` only under BULK_CAP) and goes to the tail; an account with nothing it
// may send now is scored for when it may (a due time, its cap, a pause), or leaves `ready`.
// KEYS: ready, parked, wait, meta, marker, events, completed, failed.
// ARGV: job prefix, account base, cap, bulk cap, most jobs waiting, recheck ms, the one account
// served ('' for every account), and the order recheck ms. A job of an order group found ended (or
// gone) here, its end not told by a worker, lets its group's next job into its lane (ORDER).
// Admits jobs, one per account in turn, until the wait list holds `most jobs waiting`. Answers
// {admitted, ms}: look again in ms (0: at once, -1: nobody is ready).
const ADMIT = script(`${NOW}${ORDER}
local jobPrefix, base = ARGV[1], ARGV[2]
local cap, bulkCap, maxWait, recheck = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local room = maxWait - redis.call('LLEN', KEYS[3])
if room <= 0 then return {0, 20} end
local admitted = 0
for _ = 1, 25 + room do
  local head = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if ARGV[7] ~= '' then
    local score = redis.call('ZSCORE', KEYS[1], ARGV[7])
    head = score and {ARGV[7], score} or {}
  end
  if #head == 0 then return {admitted, -1} end
  local tag, at = head[1], tonumber(head[2])
  if at > now then return {admitted, at - now} end
  local k = base .. tag .. ':'
  local paused = redis.call('PTTL', k .. 'pause')
  if redis.call('EXISTS', k .. 'held') == 1 then
    -- Held by an operator: out of the turns until \`resume\` puts it back (an add puts it back too,
    -- and is taken out again here).
    redis.call('ZREM', KEYS[1], tag)
  elseif paused > 0 then
    redis.call('ZADD', KEYS[1], now + paused, tag)
  else
    local inflight = k .. 'inflight'
    for _, id in ipairs(redis.call('ZRANGE', inflight, 0, -1)) do
      if redis.call('ZSCORE', KEYS[7], id) or redis.call('ZSCORE', KEYS[8], id)
        or redis.call('EXISTS', jobPrefix .. id) == 0 then
        redis.call('ZREM', inflight, id)
        orderEnded(k, id, KEYS[1], tag)
      end
    end
    local n = redis.call('ZCARD', inflight)
    local pick, nextAt = nil, nil
    for _, lane in ipairs({ {k .. 'lane', cap}, {k .. 'bulk', bulkCap} }) do
      local first = redis.call('ZRANGE', lane[1], 0, 0, 'WITHSCORES')
      if #first > 0 and not pick then
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
      if redis.call('EXISTS', jobPrefix .. id) == 1 then
        -- As BullMQ's promote: to the wait list, its marker set (not while the queue is paused).
        redis.call('LPUSH', KEYS[3], id)
        if redis.call('HEXISTS', KEYS[4], 'paused') == 0 then redis.call('ZADD', KEYS[5], 0, '0') end
        redis.call('XADD', KEYS[6], 'MAXLEN', '~', 10000, '*', 'event', 'waiting', 'jobId', id)
        redis.call('ZADD', inflight, now, id)
        admitted = admitted + 1
        if admitted >= room then return {admitted, 0} end
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
return {admitted, 0}`);

// A job of the account ended: its place in flight is free, and the account may take a turn now. A job
// of an order group (ARGV[3]: the account's base, else '') lets the group's next job into its lane.
const RELEASE = script(`${NOW}${ORDER}
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then redis.call('ZADD', KEYS[2], 'LT', now, ARGV[2]) end
if ARGV[3] ~= '' then orderEnded(ARGV[3], ARGV[1], KEYS[2], ARGV[2]) end
return 1`);

/**
 * Gives back the place in flight of a job of `account` that ended; `ordered`: the job was added with
 * an `orderGroup`, whose next job is then admitted.
 */
export async function release(
  redis: RedisClient,
  keyPrefix: string,
  account: string,
  id: string,
  ordered = false,
) {
  const a = accountKeys(keyPrefix, account);
  await runScript(
    redis,
    RELEASE,
    [a.inflight, turnKeys(keyPrefix).ready],
    [id, accountTag(account), ordered ? a.base : ''],
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

// Where each kept job of one account stands (ids of jobs gone past their retention are dropped):
// {waiting, delayed, active, orphaned, delivered, failed, unknown}, the ids not final, whether the
// account is held (1 or 0), and how long its oldest job due in its lanes has waited (ms, -1: none).
// KEYS: jobs, lane, bulk, completed, failed, delayed, active, unknown, queued (behind an order group),
// held. ARGV: job prefix, 1 to list.
const ACCOUNT_STATES = script(`${NOW}
local c = {0, 0, 0, 0, 0, 0, 0}
local open = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local jobKey = ARGV[1] .. id
  if redis.call('EXISTS', jobKey) == 0 then redis.call('ZREM', KEYS[1], id)
  elseif redis.call('ZSCORE', KEYS[4], id) then c[5] = c[5] + 1
  elseif redis.call('ZSCORE', KEYS[5], id) then
    if redis.call('ZSCORE', KEYS[8], id) then c[7] = c[7] + 1 else c[6] = c[6] + 1 end
  else
    if ARGV[2] == '1' then open[#open + 1] = id end
    local s = redis.call('ZSCORE', KEYS[2], id) or redis.call('ZSCORE', KEYS[3], id)
      or redis.call('ZSCORE', KEYS[9], id)
    if s then
      if math.floor(tonumber(s) / 1000) > now then c[2] = c[2] + 1 else c[1] = c[1] + 1 end
    elseif redis.call('ZSCORE', KEYS[6], id) then c[2] = c[2] + 1
    elseif redis.call('EXISTS', jobKey .. ':lock') == 1 then c[3] = c[3] + 1
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
    `${keyPrefix}oa:unknown`,
    a.queued,
    a.held,
  ];
  const [counts, open, held, oldest] = (await runScript(redis, ACCOUNT_STATES, keys, [
    keyPrefix,
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

const EXISTS = script(`return redis.call('EXISTS', KEYS[1])`);

/** Whether an operator holds `account` (one read, by a worker about to start one of its jobs). */
export async function accountHeld(redis: RedisClient, keyPrefix: string, account: string): Promise<boolean> {
  return Number(await runScript(redis, EXISTS, [accountKeys(keyPrefix, account).held], [])) === 1;
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
// order group (KEYS: lane, bulk, queued), else nothing.
const LANE_OF = script(`${NOW}
local score = redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZSCORE', KEYS[2], ARGV[1])
  or redis.call('ZSCORE', KEYS[3], ARGV[1])
if not score then return false end
return math.floor(tonumber(score) / 1000) > now and 'delayed' or 'waiting'`);

/**
 * Whether a job of `account` is parked, waiting for its account's turn: `waiting` (due) or `delayed`
 * (not yet), in its lanes or behind its order group; `undefined` when it is not (admitted to BullMQ, or
 * not stored). A job leaves its lane only forwards (admitted or cancelled), and `queued` only for its
 * lane, so a job found in none is read from BullMQ after.
 */
export async function parkedState(
  redis: RedisClient,
  keyPrefix: string,
  account: string,
  id: string,
): Promise<'waiting' | 'delayed' | undefined> {
  const a = accountKeys(keyPrefix, account);
  const state = await runScript(redis, LANE_OF, [a.lane, a.bulk, a.queued], [id]);
  return state === 'waiting' || state === 'delayed' ? state : undefined;
}

// How many parked jobs there are, and how many of them are due.
const PARKED = script(`${NOW}
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCOUNT', KEYS[1], '-inf', now * 1000 + 999)}`);

/** How many parked jobs are due (`waiting`) and how many are not yet (`delayed`), all accounts. */
export async function parkedCounts(redis: RedisClient, keyPrefix: string) {
  const [all, due] = (await runScript(redis, PARKED, [turnKeys(keyPrefix).parked], [])) as [number, number];
  return { due: Number(due), notYet: Number(all) - Number(due) };
}

// A page of the parked job ids (KEYS[1]: parked) in the order they are due: those due now (ARGV[1]
// 'waiting') or not yet (else), ARGV[2] of them skipped, at most ARGV[3] (-1: all).
const PARKED_PAGE = script(`${NOW}
local edge = ms(now * 1000 + 999)
if ARGV[1] == 'waiting' then
  return redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', edge, 'LIMIT', ARGV[2], ARGV[3])
end
return redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. edge, '+inf', 'LIMIT', ARGV[2], ARGV[3])`);

/**
 * A page of the parked jobs' ids, all accounts, in the order they are due: those due (`waiting`, as
 * {@link parkedCounts} counts them) or not yet (`delayed`); `skip` of them skipped, at most `take`
 * (`Infinity`: all the rest).
 */
export async function parkedIds(
  redis: RedisClient,
  keyPrefix: string,
  state: 'waiting' | 'delayed',
  skip: number,
  take: number,
): Promise<string[]> {
  if (take <= 0) return [];
  const count = Number.isFinite(take) ? take : -1;
  return (await runScript(
    redis,
    PARKED_PAGE,
    [turnKeys(keyPrefix).parked],
    [state, skip, count],
  )) as string[];
}

/**
 * What a cancel of a job of `account` takes it out of, in the same step as BullMQ's lists (the
 * outbox's `CANCEL`, which includes {@link ORDER}): its lanes and indexes (`keys`: lane, bulk, jobs,
 * parked, ready, queued), its account (`tag`) out of `ready` when its lanes are left empty, and its
 * order group (the account's `base`), whose next job takes its place when it held the group.
 */
export function cancelKeysOf(
  keyPrefix: string,
  account: string,
): { keys: string[]; tag: string; base: string } {
  const a = accountKeys(keyPrefix, account);
  const { parked, ready } = turnKeys(keyPrefix);
  return { keys: [a.lane, a.bulk, a.jobs, parked, ready, a.queued], tag: accountTag(account), base: a.base };
}

/**
 * The dispatch loop of one worker process: admits one job at a time into BullMQ's wait list, in
 * turns across accounts, while the list holds fewer than `concurrency` jobs. With nothing to admit it
 * sleeps until the next account's time, at most {@link IDLE_MS}; `wake()` (a job added or ended in
 * this process) ends the sleep at once.
 */
export class Dispatcher {
  #stopped = false;
  #nap: { wake(): void } | undefined;
  readonly #done: Promise<void>;

  constructor(
    private readonly redis: () => Promise<RedisClient>,
    private readonly keyPrefix: string,
    private readonly queue: () => Promise<Queue>,
    private readonly concurrency: number,
    private readonly only?: string,
  ) {
    this.#done = this.#run();
  }

  wake(): void {
    this.#nap?.wake();
  }

  async #run(): Promise<void> {
    const keys = turnKeys(this.keyPrefix);
    let failures = 0;
    while (!this.#stopped) {
      let waitMs: number;
      try {
        const [redis, queue] = await Promise.all([this.redis(), this.queue()]);
        const answer = (await runScript(
          redis,
          ADMIT,
          [
            keys.ready,
            keys.parked,
            queue.toKey('wait'),
            queue.toKey('meta'),
            queue.toKey('marker'),
            queue.toKey('events'),
            queue.toKey('completed'),
            queue.toKey('failed'),
          ],
          [
            this.keyPrefix,
            keys.accountBase,
            ACCOUNT_CAP,
            BULK_CAP,
            this.concurrency,
            RECHECK_MS,
            this.only === undefined ? '' : accountTag(this.only),
            ORDER_RECHECK_MS,
          ],
        )) as [number, number];
        failures = 0;
        const asked = Number(answer[1]);
        // More to look at now (the wait list had room left, or more accounts to look at).
        if (asked === 0) continue;
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
   * shutdown): a job it admits still goes to the wait list, for any worker.
   */
  stop(): void {
    this.#stopped = true;
    this.#nap?.wake();
    this.#done.catch(() => {});
  }
}
