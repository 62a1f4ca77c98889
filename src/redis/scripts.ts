/**
 * The Lua scripts of `oa-messaging/redis`. Each runs atomically in Redis; the limiter's read Redis's own
 * clock (TIME), the one clock every process shares.
 */
import { script } from './script.js';

/**
 * The start of a script that needs Redis's clock: `now` (ms). Redis before 5 refuses writes after
 * TIME in a script unless it replicates effects; later versions always do (the call is then a no-op).
 */
export const NOW = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function ms(value) return string.format('%.0f', value) end
`;

/** KEYS[1]: a key (the token pair, a bot session). Returns its JSON, or nil. */
export const GET_VALUE = script(`return redis.call('GET', KEYS[1])`);

/** KEYS[1]: a key; ARGV[1]: the JSON; ARGV[2]: time to live in ms, 0 for none. */
export const SET_VALUE = script(`
if tonumber(ARGV[2]) > 0 then
  return redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
end
return redis.call('SET', KEYS[1], ARGV[1])
`);

/** KEYS[1]: a key. */
export const DELETE_VALUE = script(`return redis.call('DEL', KEYS[1])`);

/** KEYS[1]: the lock; ARGV[1]: this holder's random value; ARGV[2]: ttl in ms. 'OK' when taken. */
export const TAKE_LOCK = script(`return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])`);

/**
 * Claims a message for a webhook delivery (SET NX PX with the delivery's id). KEYS[1]: the message's
 * key; ARGV[1]: the delivery's id; ARGV[2]: how long the claim lasts, in ms. Returns `claimed`, or
 * `done` / `in-flight` when the key was there.
 */
export const CLAIM_MESSAGE = script(`
if redis.call('SET', KEYS[1], 'claim:' .. ARGV[1], 'NX', 'PX', ARGV[2]) then return 'claimed' end
if redis.call('GET', KEYS[1]) == 'done' then return 'done' end
return 'in-flight'
`);

/** Marks a message processed for ARGV[1] ms, whoever holds the claim now: processed is processed. */
export const COMPLETE_MESSAGE = script(`return redis.call('SET', KEYS[1], 'done', 'PX', ARGV[1])`);

/** Deletes the claim only if it is still this delivery's (ARGV[1]): after it expired, another may hold it. */
export const RELEASE_MESSAGE = script(`
if redis.call('GET', KEYS[1]) == 'claim:' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * Extends a webhook delivery's claim only while it is still its own (ARGV[1]) to ARGV[2] ms: 1, or 0 when
 * it expired, another delivery holds it or it is done.
 */
export const EXTEND_MESSAGE = script(`
if redis.call('GET', KEYS[1]) == 'claim:' .. ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

/** Extends the lock only while it is still ours: 1, or 0 when it expired and someone else may hold it. */
export const EXTEND_LOCK = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`);

/** Deletes the lock only if it is still ours (compare and delete). */
export const RELEASE_LOCK = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/**
 * Takes up to `#members` slots in every window of KEYS at once (an upload: its own and the general
 * one). Each window is a sorted set of requests scored by when they ended; a request in flight is
 * scored ahead (now + lease), renewed by its process, so that a crashed process's slots come back.
 * A slot is free again `hold` (the window plus a margin) after its request ended.
 *
 * The members before `urgent` are ordinary requests, the rest a campaign's (`bulk`). The key after the
 * windows is the set of processes with an ordinary request waiting for a slot (scored by when that
 * claim lapses): while another process is in it, bulk members get no slot, so that its request takes
 * the next one. This process is put in it when an ordinary member of its got no slot, and taken out
 * when all did.
 *
 * Replies first (`replyReserve`): the bulk set holds the general window's bulk members (scored as
 * there). With `reserve` > 0, bulk members hold at most `max - reserve` slots of the general window
 * (the last one): the other `reserve` are the ordinary requests'. And bulk grants keep to a pace, one
 * per `pace` ms, shared by every process through the pace key (when the next is due, in ms; a grant
 * may go up to one pace before it, so that a wake-up a little late costs no rate). Here, in the one
 * script, every process agrees on both.
 *
 * KEYS: the windows, the waiting set, the pace key, the bulk set. ARGV: lease, then max and hold of each window,
 * then this process's id, how long its claim in the waiting set lasts, `urgent`, `reserve` (slots),
 * `pace` (ms, 0: none), then one member id per slot wanted. Returns { granted, waitMs }: the first
 * `granted` members got a slot; when some did not, `waitMs` is the earliest the next in line may have
 * one (a slot back: a request still in flight ends no sooner than now; a bulk member's turn in the
 * pace), or a short recheck when the slots are there but held for another process's request.
 */
export const ACQUIRE = script(`${NOW}
local lease = tonumber(ARGV[1])
local windows = #KEYS - 3
local waiting, paceKey, bulkKey = KEYS[windows + 1], KEYS[windows + 2], KEYS[windows + 3]
local owner, claimMs, urgent = ARGV[2 + 2 * windows], tonumber(ARGV[3 + 2 * windows]), tonumber(ARGV[4 + 2 * windows])
local reserve, pace = tonumber(ARGV[5 + 2 * windows]), tonumber(ARGV[6 + 2 * windows])
local first = 7 + 2 * windows
local wanted = #ARGV - first + 1
urgent = math.min(urgent, wanted)
local bulkWanted = wanted - urgent
local heldForOthers = false
if bulkWanted > 0 then
  redis.call('ZREMRANGEBYSCORE', waiting, '-inf', ms(now))
  local others = redis.call('ZCARD', waiting)
  if redis.call('ZSCORE', waiting, owner) then others = others - 1 end
  if others > 0 then
    bulkWanted = 0
    heldForOthers = true
  end
end
local free = wanted
local counts, limits = {}, {}
for i = 1, windows do
  local key = KEYS[i]
  local max, hold = tonumber(ARGV[2 * i]), tonumber(ARGV[2 * i + 1])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ms(now - hold))
  counts[i], limits[i] = redis.call('ZCARD', key), max
  free = math.min(free, max - counts[i])
end
local grantedUrgent = math.max(0, math.min(urgent, free))
local bulkRoom = free - grantedUrgent
local bulkCount = 0
if bulkWanted > 0 then
  redis.call('ZREMRANGEBYSCORE', bulkKey, '-inf', ms(now - tonumber(ARGV[2 * windows + 1])))
  bulkCount = redis.call('ZCARD', bulkKey)
  if reserve > 0 then bulkRoom = math.min(bulkRoom, limits[windows] - reserve - bulkCount) end
end
local grantedBulk = math.max(0, math.min(bulkWanted, bulkRoom))
local paceWait = 0
if pace > 0 and grantedBulk > 0 then
  local due = tonumber(redis.call('GET', paceKey) or '0')
  local n = 0
  while n < grantedBulk and due - pace <= now do
    due = math.max(due, now) + pace
    n = n + 1
  end
  if n < grantedBulk then paceWait = due - pace - now end
  grantedBulk = n
  if n > 0 then redis.call('SET', paceKey, string.format('%.3f', due), 'PX', ms(due - now + 1000)) end
end
local granted = grantedUrgent + grantedBulk
for i = 1, windows do
  local key = KEYS[i]
  local hold = tonumber(ARGV[2 * i + 1])
  for j = 1, granted do redis.call('ZADD', key, ms(now + lease), ARGV[first + j - 1]) end
  if granted > 0 then redis.call('PEXPIRE', key, ms(lease + hold + 1000)) end
end
if grantedBulk > 0 then
  for j = grantedUrgent + 1, granted do redis.call('ZADD', bulkKey, ms(now + lease), ARGV[first + j - 1]) end
  redis.call('PEXPIRE', bulkKey, ms(lease + tonumber(ARGV[2 * windows + 1]) + 1000))
end
if grantedUrgent < urgent then
  redis.call('ZADD', waiting, ms(now + claimMs), owner)
  redis.call('PEXPIRE', waiting, ms(claimMs + 1000))
else
  redis.call('ZREM', waiting, owner)
end
local wait = 0
if granted < wanted then
  local function backIn(key, count, max, hold)
    local oldest = redis.call('ZRANGE', key, count - max, count - max, 'WITHSCORES')
    return math.min(tonumber(oldest[2]), now) + hold - now
  end
  for i = 1, windows do
    local count = counts[i] + granted
    if count >= limits[i] then wait = math.max(wait, backIn(KEYS[i], count, limits[i], tonumber(ARGV[2 * i + 1]))) end
  end
  -- The next in line is a bulk member once every ordinary one has its slot: the reserve binds it.
  local bulkNext = grantedUrgent == urgent
  if bulkNext and reserve > 0 then
    local count, max = bulkCount + grantedBulk, limits[windows] - reserve
    if count >= max then wait = math.max(wait, backIn(bulkKey, count, max, tonumber(ARGV[2 * windows + 1]))) end
  end
  if bulkNext then
    wait = math.max(wait, paceWait)
    if heldForOthers and wait == 0 then wait = 50 end
  end
  wait = math.max(1, math.ceil(wait))
end
return { granted, wait }
`);

/** The request has ended: its slots are scored now. KEYS: its windows. ARGV: member, hold of each window. */
export const ENDED = script(`${NOW}
for i, key in ipairs(KEYS) do
  local hold = tonumber(ARGV[i + 1])
  redis.call('ZADD', key, ms(now), ARGV[1])
  if redis.call('PTTL', key) < hold + 1000 then redis.call('PEXPIRE', key, ms(hold + 1000)) end
end
return 1
`);

/** The request was not sent: its slots are free now. KEYS: its windows. ARGV[1]: member. */
export const RELEASE = script(`
for _, key in ipairs(KEYS) do redis.call('ZREM', key, ARGV[1]) end
return 1
`);

/**
 * Keeps the slots of requests still in flight: scored now + lease again (and counted again, should a
 * frozen process have let a lease lapse). KEYS: the windows these requests count in. ARGV: lease, hold
 * of each window, then the members.
 */
export const RENEW_LEASES = script(`${NOW}
local lease = tonumber(ARGV[1])
for i, key in ipairs(KEYS) do
  local hold = tonumber(ARGV[i + 1])
  for j = 2 + #KEYS, #ARGV do redis.call('ZADD', key, ms(now + lease), ARGV[j]) end
  redis.call('PEXPIRE', key, ms(lease + hold + 1000))
end
return 1
`);
