/**
 * How an outbox stores what `add` and `addMany` give it, chunk by chunk: each checked entry without an
 * account as a BullMQ job (`Queue.addBulk`), those of accounts as the outbox's own records, parked in
 * their lanes until their turn (see outbox-redis/turns.ts), in a queue anchored first (outbox-redis/anchor.ts).
 */
import type { IORedis } from '../redis/client.js';
import type { jobTraceOptions } from '../telemetry/jobs.js';
import type { OutboxAddResult } from './campaign.js';
import type { QueueConnection } from './connection.js';
import type { checkEntry } from './methods.js';
import { storedAlready } from './outbox-redis/cancel.js';
import { redisNow } from './outbox-redis/record.js';
import { type ParkedJob, storeParked } from './outbox-redis/turns.js';
import { BACKOFF_TYPE, FIRST_BACKOFF_MS, type OutboxJobData } from './outbox-worker.js';
import type { LazyQueue } from './shared.js';

/** An entry as `checkEntry` checked it, with its params and its job id. */
export type CheckedEntry = ReturnType<typeof checkEntry> & { params: unknown; id: string };

/** What the store needs of its outbox. */
export interface StoreDeps {
  readonly connection: QueueConnection;
  readonly queue: LazyQueue;
  readonly keyPrefix: string;
  /** Seconds a final job is kept. */
  readonly retention: number;
  readonly attempts: number;
  /** Told when jobs of accounts were parked: this process's dispatch loops look at once. */
  readonly parked: () => void;
  /** Anchors the queue (see outbox-redis/anchor.ts): before the first job of an account, and again once unanchored. */
  readonly anchor: () => Promise<void>;
}

/** The `store` of one outbox: see its comment. */
export function outboxStore(deps: StoreDeps) {
  const { connection, queue, keyPrefix, retention, attempts, parked: woke } = deps;
  // The queue anchored by this process: once, unless a store finds it unanchored again (obliterated).
  let anchoring: Promise<void> | undefined;
  const anchored = () => {
    anchoring ??= deps.anchor();
    anchoring.catch(() => {
      anchoring = undefined;
    });
    return anchoring;
  };
  const open = () => queue.open();
  /** The BullMQ job of a checked entry, stored at Redis's `now` (0: at a time it does not need). */
  const jobOf = (entry: CheckedEntry, trace: ReturnType<typeof jobTraceOptions>, now: number) => {
    const { method, params, key, account, bulk, orderGroup } = entry;
    // When a job is due is decided on Redis's clock: its time is stored with it, and BullMQ's own delay
    // (compared with a worker's clock) counts from Redis's now. A worker that looks early puts it back.
    const notBefore = entry.at ?? (entry.delay ? now + entry.delay : undefined);
    const data: OutboxJobData = { method, params, key };
    if (account !== undefined) data.account = account;
    if (bulk) data.bulk = true;
    if (orderGroup !== undefined) data.orderGroup = orderGroup;
    if (notBefore !== undefined) data.notBefore = notBefore;
    const opts: Record<string, unknown> = { jobId: entry.id };
    if (entry.priority) opts.priority = entry.priority;
    opts.attempts = attempts;
    opts.backoff = { type: BACKOFF_TYPE, delay: FIRST_BACKOFF_MS };
    opts.removeOnComplete = { age: retention };
    opts.removeOnFail = { age: retention };
    if (trace) opts.telemetry = trace.telemetry;
    // A job of an account is parked instead (see outbox-redis/turns.ts): its account's turns decide when it goes.
    if (notBefore !== undefined && account === undefined) {
      opts.timestamp = now;
      opts.delay = Math.max(0, notBefore - now);
    }
    return { name: method, data, opts };
  };

  /** A checked entry of an account as its lanes keep it (`index`: its order in its chunk). */
  const parkedOf = (
    entry: CheckedEntry & { account: string },
    trace: ReturnType<typeof jobTraceOptions>,
    now: number,
    index: number,
  ): ParkedJob => {
    const { name, data, opts } = jobOf(entry, trace, now);
    return {
      account: entry.account,
      id: entry.id,
      due: data.notBefore ?? 0,
      index,
      bulk: entry.bulk === true,
      orderGroup: entry.orderGroup,
      name,
      data: JSON.stringify(data),
      opts: JSON.stringify(opts),
    };
  };

  /**
   * A chunk's keys of jobs without an account stored already (those of accounts are looked up as they
   * are stored), and Redis's now when a job of it needs it (else 0).
   */
  const readChunk = (redis: IORedis, chunk: readonly CheckedEntry[]) => {
    const plain = chunk.filter((e) => e.account === undefined).map((e) => e.id);
    const timed = chunk.some((e) => e.at !== undefined || e.delay);
    return Promise.all([
      plain.length > 0 ? storedAlready(redis, keyPrefix, plain) : [],
      timed ? redisNow(redis) : 0,
    ]);
  };

  /**
   * Stores the chunks one after the other, and counts what they add and the keys found known. A chunk's
   * jobs without an account go in one BullMQ `addBulk` (their keys read just before); its jobs of
   * accounts in one script of ours (`storeParked`, which finds their known keys itself), sent before the
   * next chunk is built, so that the next chunk is built while Redis writes them. Resolves once every
   * chunk is written. An error reading `chunks` (a bad entry) stops it there: the chunks before stay
   * stored.
   */
  const store = async (
    chunks: Iterator<CheckedEntry[]>,
    trace: ReturnType<typeof jobTraceOptions>,
  ): Promise<OutboxAddResult> => {
    const knownKeys: string[] = [];
    let next = chunks.next();
    if (next.done) return { added: 0, known: 0, knownKeys };
    const { queue: q } = await open();
    const redis = await connection.producer();
    let added = 0;
    let reading = readChunk(redis, next.value);
    // The previous chunk's jobs of accounts being stored, then its keys counted.
    let parking: Promise<void> | undefined;
    try {
      while (!next.done) {
        const chunk = next.value;
        const [stored, now] = await reading;
        const known = chunk.map(() => false);
        const adding = new Set<string>();
        const jobs = [];
        const parked: ParkedJob[] = [];
        const parkedAt: number[] = [];
        for (let i = 0, plain = 0; i < chunk.length; i++) {
          const entry = chunk[i] as CheckedEntry;
          if (entry.account !== undefined) {
            parked.push(parkedOf(entry as CheckedEntry & { account: string }, trace, now, i));
            parkedAt.push(i);
            continue;
          }
          if (stored[plain++] || adding.has(entry.id)) known[i] = true;
          else adding.add(entry.id);
          jobs.push(jobOf(entry, trace, now));
        }
        if (jobs.length > 0) await q.addBulk(jobs);
        added += adding.size;
        // One chunk's jobs of accounts at a time, and the keys counted in the order the entries came.
        await parking;
        if (parked.length > 0) await anchored();
        parking = storeParked(redis, keyPrefix, parked).then(
          async ({ known: knownParked, anchored: still }) => {
            // Obliterated since this process anchored it: anchored again, so that these jobs are tied to it.
            if (!still) {
              anchoring = undefined;
              await anchored();
            }
            knownParked.forEach((wasKnown, j) => {
              if (wasKnown) known[parkedAt[j] as number] = true;
              else added++;
            });
            chunk.forEach((entry, i) => {
              if (known[i]) knownKeys.push(entry.key);
            });
            if (parked.length > 0) woke();
          },
        );
        // Awaited by the next turn or below (its error is the call's): never an unhandled rejection.
        parking.catch(() => {});
        let failure: { error: unknown } | undefined;
        try {
          next = chunks.next();
        } catch (error) {
          failure = { error };
          next = { done: true, value: undefined };
        }
        if (!next.done) {
          reading = readChunk(redis, next.value);
          // Awaited by the next turn, unless this one fails first: never an unhandled rejection.
          reading.catch(() => {});
        }
        if (failure) throw failure.error;
      }
      await parking;
    } catch (error) {
      await parking?.catch(() => {});
      throw error;
    }
    return { added, known: knownKeys.length, knownKeys };
  };

  return store;
}
