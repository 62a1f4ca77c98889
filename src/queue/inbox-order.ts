/**
 * The inbox's `order: 'sender'`: each sender's message events handled one at a time, in the order the
 * OA sent them, by whichever worker holds that sender's lock.
 *
 * Per sender (all in one hash slot, `{<sender>}`): a sorted set of pending events (every score 0,
 * each member `MsgTime:MsgSeq:arrival:jobId:[traceparent:]event JSON`, the numbers zero-padded, so
 * that the set's lexicographic order is the OA's order and the first member carries the event itself:
 * reading the next event and removing the last one is one script call; the traceparent, kept when the
 * delivery was traced, is the trace the event is handled in), an arrival counter, a "seen" marker per
 * event (kept `retentionMs`, so that a redelivery is stored once, also after it was handled) and the
 * lock. `store` writes the event there in one script, then adds the BullMQ job as before: a "turn" of
 * that sender. A turn takes the lock (SET NX PX with a token of its own, extended while held) and
 * drains the set in order; the lock is released in the same script that finds the set empty, so that
 * an event stored meanwhile is drained by this holder, or finds the lock free and is drained by its own
 * turn. Each taking of the lock also takes a fencing token (the `fence` key: the last one given), which
 * the handler gets with its turn, so that a holder that stalled past its lock can be refused.
 */
import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { sleep } from '../core/call-control.js';
import { OALockLostError } from '../errors.js';
import type { IORedis } from '../redis/client.js';
import { runScript, script } from '../redis/script.js';
import { EXTEND_LOCK, RELEASE_LOCK } from '../redis/scripts.js';
import { activeTraceparent, inDeliveryTrace } from '../telemetry/jobs.js';
import { keepLease } from '../webhook/lease.js';
import { isMessageEvent, type WebhookEvent } from '../webhook/schemas.js';
import type { BullMQ } from './load.js';

/** The BullMQ job name of a turn (an `order: 'none'` inbox names its jobs `event`). */
export const TURN = 'turn';

/** How long the first retry of a failing handler waits; doubled each time. */
const FIRST_BACKOFF_MS = 1000;

/** The widest number a member's sortable part holds (MsgTime, MsgSeq, the arrival counter). */
const WIDTH = 16;

/**
 * Stores one event as pending unless it was seen. KEYS: seen marker, pending set, arrival counter.
 * ARGV: retention in ms, the sortable `MsgTime:MsgSeq:` part, `jobId:event`, `1` to check the marker
 * (an event without a dedupe key has none). Returns 1 when stored, 0 for a redelivery.
 */
const STORE = script(`
if ARGV[4] == '1' and not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
local n = redis.call('INCR', KEYS[3])
redis.call('PEXPIRE', KEYS[3], ARGV[1])
redis.call('ZADD', KEYS[2], 0, ARGV[2] .. string.format('%0${WIDTH}d', n) .. ':' .. ARGV[3])
return 1
`);

/** How long the last fencing token of a sender is kept: a later one must be greater than it. */
const FENCE_TTL_MS = 86_400_000;

/**
 * A new fencing token in KEYS[3]: Redis's clock in microseconds, above the last one given (a clock
 * that stepped back gives the last plus one), as a string (a Lua number prints with 14 digits).
 */
const NEW_FENCE = `
local now = redis.call('TIME')
local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
if fence <= last then fence = last + 1 end
fence = string.format('%.0f', fence)
redis.call('SET', KEYS[3], fence, 'PX', ${FENCE_TTL_MS})
`;

/**
 * Takes the sender's lock and reads its first pending event. KEYS: lock, pending set, fence. ARGV:
 * token, ttl in ms. Returns `{'held'}`, `{'empty'}` (the lock released again) or `{'next', member,
 * fence}`: a fencing token greater than any before it, checked by the session's save.
 */
const TAKE = script(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'held'} end
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
if not first then
  redis.call('DEL', KEYS[1])
  return {'empty'}
end
${NEW_FENCE}
return {'next', first, fence}
`);

/**
 * Removes the event just handled (ARGV[3]) and reads the next one, or releases the lock when there is
 * none: atomically, so that an event stored meanwhile is never left without a holder or a turn. KEYS:
 * lock, pending set, fence. ARGV: token, ttl in ms, member. A lock that expired meanwhile is taken
 * again, with a new fencing token (another turn may have held it in between); one another turn took is
 * left to it: `{'lost'}`. Otherwise `{'empty'}` or `{'next', member, fence}`.
 */
const NEXT = script(`
redis.call('ZREM', KEYS[2], ARGV[3])
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return {'lost'} end
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
if not first then
  redis.call('DEL', KEYS[1])
  return {'empty'}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
local fence = ARGV[4]
if not holder then
${NEW_FENCE}
end
return {'next', first, fence}
`);

/** The sender's keys: one hash slot (`{...}`), under the queue's own key prefix. */
function senderKeys(keyPrefix: string, sender: string) {
  const base = `${keyPrefix}oa:{${sender}}`;
  return {
    lock: `${base}:lock`,
    pending: `${base}:pending`,
    counter: `${base}:n`,
    seen: `${base}:seen:`,
    fence: `${base}:fence`,
  };
}

/**
 * The sender of `event` as a key part (the account and `From_Account`: two OAs served by one receiver
 * are two conversations), or `undefined` for an event that is not ordered (no sender, not a message).
 */
export function senderOf(event: WebhookEvent): string | undefined {
  if (!isMessageEvent(event)) return undefined;
  const from = event.data.From_Account;
  if (from === undefined || from === '') return undefined;
  // Readable where it is plain; `{`, `}` and `:` would change the hash slot or the key's shape.
  const account = event.username ?? '';
  const plain = (part: string) => /^[\w.@-]{0,64}$/.test(part);
  return plain(account) && plain(from)
    ? `${account}/${from}`
    : Buffer.from(JSON.stringify([account, from])).toString('base64url');
}

/** A non-negative whole number zero-padded to {@link WIDTH}; anything else (missing) is 0. */
function sortable(value: unknown): string {
  const n = typeof value === 'number' && Number.isFinite(value) ? Math.floor(value) : 0;
  return String(Math.min(Math.max(0, n), 10 ** WIDTH - 1)).padStart(WIDTH, '0');
}

/**
 * Stores `event` among its sender's pending ones, in the OA's order (`MsgTime`, then `MsgSeq`, then
 * arrival), unless it was seen within `retentionMs`. `hasKey`: whether `jobId` comes from the dedupe
 * key (a random one is never seen again). Resolves `true` when stored, `false` for a redelivery.
 */
export async function storePending(
  redis: IORedis,
  keyPrefix: string,
  sender: string,
  event: WebhookEvent,
  jobId: string,
  hasKey: boolean,
  retentionMs: number,
): Promise<boolean> {
  const keys = senderKeys(keyPrefix, sender);
  const data = (event as { data?: { MsgTime?: unknown; MsgSeq?: unknown } }).data;
  const order = `${sortable(data?.MsgTime)}:${sortable(data?.MsgSeq)}:`;
  // The delivery's trace, kept with the event: the turn that drains it may be another event's.
  const traceparent = activeTraceparent();
  const rest = `${traceparent === undefined ? '' : `${traceparent}:`}${JSON.stringify(event)}`;
  const answer = await runScript(
    redis,
    STORE,
    [`${keys.seen}${jobId}`, keys.pending, keys.counter],
    [retentionMs, order, `${jobId}:${rest}`, hasKey ? '1' : '0'],
  );
  return answer === 1;
}

/**
 * The job id, trace and event of a pending member: `time:seq:arrival:jobId:[traceparent:]event` (a
 * traceparent has no `:` and the event is a JSON object, `{...}`; a member kept without one has none).
 */
function parseMember(member: string): { id: string; traceparent: string | undefined; event: WebhookEvent } {
  let at = -1;
  for (let i = 0; i < 4; i++) at = member.indexOf(':', at + 1);
  const start = member.lastIndexOf(':', at - 1) + 1;
  const id = member.slice(start, at);
  let traceparent: string | undefined;
  if (member[at + 1] !== '{') {
    const end = member.indexOf(':', at + 1);
    traceparent = member.slice(at + 1, end);
    at = end;
  }
  return { id, traceparent, event: JSON.parse(member.slice(at + 1)) as WebhookEvent };
}

/**
 * What a handler of an inbox with `order: 'sender'` gets beside the event: the turn of its sender that
 * it runs in. A worker that stalls past `lockDurationMs` (paused, starved of CPU) loses the sender to
 * another worker; the turn lets the handler find out before its next side effect. `createBot` uses it:
 * its replies and its session's save check the turn, and the save is refused for a stale fence.
 */
export interface InboxTurn {
  /**
   * This holder's fencing token: greater than that of every earlier holder of the sender (Redis's clock
   * in microseconds, kept increasing). A store that keeps the fence of each write refuses a write with a
   * lower one, so that a stale holder never writes over a newer holder's state.
   */
  readonly fence: number;
  /**
   * Resolves while this worker still holds the sender (extending its lock); rejects with
   * `OALockLostError` once the lock expired or another worker took it, from then on.
   */
  assertHeld(): Promise<void>;
}

/** What a turn needs of the inbox. */
export interface TurnSettings {
  /** The queue's name, for the span of an event handled in its delivery's trace. */
  queue: string;
  keyPrefix: string;
  /** How long the sender's lock lasts unless extended (the worker's `lockDurationMs`). */
  lockTtlMs: number;
  /** How many times the handler runs for one event before it is dead-lettered. */
  attempts: number;
  handler: (event: WebhookEvent, turn: InboxTurn) => unknown;
  /** Keeps an event whose handler failed `attempts` times. */
  deadLetter: (id: string, event: WebhookEvent, error: unknown) => Promise<void>;
  /** Whether the worker is closing: the drain stops after the event at hand and hands its turn back. */
  closing: () => boolean;
  /** Calls `wake` when the worker starts closing, to cut a retry's wait short; returns an undo. */
  onClosing: (wake: () => void) => () => void;
}

type Answer = ['held'] | ['empty'] | ['lost'] | ['next', string, string];

/**
 * Runs one turn of `sender`: takes its lock and drains its pending events in order, one handler at a
 * time. A turn that finds the lock held completes at once on its first start (the holder drains what
 * it stored); one run again (its worker died, or it failed) waits for the lock to be free, as a delayed
 * job, so that a dead holder's events are drained once its lock has expired.
 */
export async function runTurn(
  bull: BullMQ,
  redis: IORedis,
  job: Job<WebhookEvent>,
  token: string | undefined,
  sender: string,
  settings: TurnSettings,
): Promise<void> {
  const { lockTtlMs } = settings;
  const keys = senderKeys(settings.keyPrefix, sender);
  const owner = randomUUID();
  const run = async (s: typeof TAKE, extra: (string | number)[] = []) =>
    (await runScript(
      redis,
      s,
      [keys.lock, keys.pending, keys.fence],
      [owner, lockTtlMs, ...extra],
    )) as Answer;

  let answer = await run(TAKE);
  if (answer[0] === 'held') {
    const firstStart = job.attemptsMade === 0 && (job.attemptsStarted ?? 1) <= 1;
    if (firstStart) return;
    await job.moveToDelayed(Date.now() + Math.min(1000, Math.ceil(lockTtlMs / 4)), token);
    throw new bull.DelayedError();
  }
  if (answer[0] !== 'next') return;

  // Extended every third of its ttl while held; a lock that lapsed (this process stalled) is taken
  // again by the next NEXT if nobody else took it, and then extended again.
  let stopExtending = () => {};
  let lapsed = false;
  const extend = () => {
    lapsed = false;
    stopExtending = keepLease(
      () => runScript(redis, EXTEND_LOCK, [keys.lock], [owner, lockTtlMs]).then((n) => n === 1),
      lockTtlMs / 3,
      () => {
        lapsed = true;
      },
    );
  };
  extend();
  try {
    while (answer[0] === 'next') {
      const member = answer[1];
      const turn = heldTurn(redis, keys.lock, owner, lockTtlMs, Number(answer[2]));
      const handled = await handleOne(member, settings, turn);
      if (!handled || settings.closing()) {
        // The worker closes: the event at hand is done (or left pending, its retries cut short), the
        // rest waits for this turn's next run, on another worker.
        const release = handled ? NEXT_DONE : RELEASE_LOCK;
        await runScript(redis, release, [keys.lock, keys.pending], [owner, member]);
        await job.moveToDelayed(Date.now(), token);
        throw new bull.DelayedError();
      }
      answer = await run(NEXT, [member, answer[2]]);
      if (answer[0] === 'next' && lapsed) extend();
    }
  } finally {
    stopExtending();
  }
}

/**
 * Removes the event just handled and releases the lock if it is still this holder's, whatever is
 * pending (a worker that closes hands its turn back). KEYS: lock, pending set. ARGV: token, member.
 */
const NEXT_DONE = script(`
redis.call('ZREM', KEYS[2], ARGV[2])
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`);

/** The turn a handler gets: `lost` once `assertHeld` found the lock gone. */
function heldTurn(redis: IORedis, lock: string, owner: string, lockTtlMs: number, fence: number) {
  const turn = {
    fence,
    lost: false,
    async assertHeld() {
      if (!turn.lost && (await runScript(redis, EXTEND_LOCK, [lock], [owner, lockTtlMs])) === 1) return;
      turn.lost = true;
      throw new OALockLostError(
        `this worker no longer holds the sender (its lock expired: the worker stalled past lockDurationMs, ${lockTtlMs} ms): another worker handles its events`,
      );
    },
  };
  return turn;
}

/**
 * Runs the handler on one pending event: retried in place (exponential backoff from 1 s), then
 * dead-lettered. `false` when the worker started closing before it succeeded, or lost the sender
 * (the turn found its lock gone): it stays pending, for the sender's holder.
 */
async function handleOne(
  member: string,
  settings: TurnSettings,
  turn: ReturnType<typeof heldTurn>,
): Promise<boolean> {
  const { id, traceparent, event } = parseMember(member);
  for (let attempt = 1; ; attempt++) {
    try {
      await inDeliveryTrace(settings.queue, id, traceparent, () => settings.handler(event, turn));
      return !turn.lost;
    } catch (error) {
      if (turn.lost) return false;
      if (attempt >= settings.attempts) {
        await settings.deadLetter(id, event, error);
        return true;
      }
      if (settings.closing()) return false;
      const wait = sleep(FIRST_BACKOFF_MS * 2 ** (attempt - 1), undefined, 'retrying an inbox event');
      const forget = settings.onClosing(wait.wake);
      await wait.done.finally(forget);
      if (settings.closing()) return false;
    }
  }
}
