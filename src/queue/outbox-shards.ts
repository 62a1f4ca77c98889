/**
 * One outbox over several BullMQ queues (`createOutbox({ shards })`): each account's jobs live in one
 * of them, chosen from a hash of the account id, so that on a Redis Cluster the accounts spread over
 * the masters (each queue is one hash tag, one slot) instead of all living on the one master of a
 * single queue. Each shard is a whole outbox of its own (its turns, at-most-once record, events);
 * this module only routes each call to the shard of its account and adds up what spans them.
 */
import { OAValidationError } from '../errors.js';
import type { OutboxAddResult } from './campaign.js';
import type { OutboxCounts, OutboxJobStatus } from './events.js';
import { checkEntry, type OutboxEntry, type OutboxLooseEntry } from './methods.js';
import { byBusiest, checkTop } from './operate.js';
import type { Outbox, OutboxWorker, OutboxWorkOptions } from './outbox-types.js';
import { checkedChunks } from './shared.js';

/** The BullMQ queue name of shard `index` of the outbox `name`: the first keeps `name` itself. */
export function shardName(name: string, index: number): string {
  return index === 0 ? name : `${name}#${index}`;
}

/**
 * The shard of an account's jobs, of `count`: a 32-bit FNV-1a hash of its id (its UTF-16 code units),
 * fixed across processes and versions. Jobs without an account live in the first.
 */
function shardOf(account: unknown, count: number): number {
  if (count <= 1 || typeof account !== 'string' || account === '') return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < account.length; i++) {
    hash ^= account.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** The `account` option of a call, as given (checked by the shard's outbox). */
const accountOf = (options: unknown): unknown => (options as { account?: unknown } | undefined)?.account;

/**
 * The outbox over `shards` (each the outbox of its shard's queue, on one connection that
 * `closeConnection` closes once they are closed): every call of one account goes to that account's
 * shard; `counts()`, `waitFor('all')`, `on` and `close` span them all.
 */
export function shardedOutbox(
  shards: readonly Outbox[],
  checkWork: (options: OutboxWorkOptions) => void,
  closeConnection: () => Promise<void>,
): Outbox {
  const of = (options: unknown) => shards[shardOf(accountOf(options), shards.length)] as Outbox;
  const first = shards[0] as Outbox;
  let closing: Promise<void> | undefined;

  /** Stores one chunk of checked entries: each shard's part at once, the known keys in the order given. */
  const storeChunk = async (chunk: readonly OutboxEntry[]): Promise<OutboxAddResult> => {
    const parts = new Map<number, OutboxEntry[]>();
    const where = chunk.map((entry) => {
      const shard = shardOf(entry.account, shards.length);
      const part = parts.get(shard);
      if (part) part.push(entry);
      else parts.set(shard, [entry]);
      return shard;
    });
    const results = new Map<number, OutboxAddResult>();
    await Promise.all(
      [...parts].map(async ([shard, part]) => {
        results.set(shard, await (shards[shard] as Outbox).addMany(part));
      }),
    );
    let added = 0;
    const next = new Map<number, number>();
    const knownKeys: string[] = [];
    for (const result of results.values()) added += result.added;
    chunk.forEach((entry, i) => {
      const shard = where[i] as number;
      const known = (results.get(shard) as OutboxAddResult).knownKeys;
      const at = next.get(shard) ?? 0;
      if (known[at] === entry.key) {
        knownKeys.push(entry.key);
        next.set(shard, at + 1);
      }
    });
    return { added, known: knownKeys.length, knownKeys };
  };

  const outbox: Outbox = {
    add: (method, params, options) => of(options).add(method, params, options),

    // Either signature's entries: each is checked here, whatever TypeScript knew of it.
    async addMany(entries: Iterable<OutboxLooseEntry>) {
      if (entries === null || typeof (entries as Iterable<unknown>)?.[Symbol.iterator] !== 'function') {
        throw new OAValidationError('addMany needs an array (or iterable) of entries', []);
      }
      // Checked as one outbox checks them (an array whole, before anything is stored; another iterable
      // chunk by chunk), then each chunk stored in its shards.
      const check = (entry: unknown, index: number): OutboxEntry => {
        const e = (entry ?? {}) as Partial<OutboxEntry>;
        checkEntry(e.method, e.params, e, [index]);
        return e as OutboxEntry;
      };
      const total: OutboxAddResult = { added: 0, known: 0, knownKeys: [] };
      const add = async (chunk: OutboxEntry[]) => {
        const result = await storeChunk(chunk);
        total.added += result.added;
        total.known += result.known;
        total.knownKeys.push(...result.knownKeys);
      };
      for (const chunk of checkedChunks(entries, check)) await add(chunk);
      return total;
    },

    work(options) {
      checkWork(options);
      // One account's worker: its shard. Accounts: every shard (the jobs without an account, with
      // `client`, in the first). `client` alone: the jobs without an account, in the first.
      const workers: OutboxWorker[] =
        options.account !== undefined
          ? [of(options).work(options)]
          : options.accounts !== undefined
            ? shards.map((shard, i) => shard.work(i === 0 ? options : { ...options, client: undefined }))
            : [first.work(options)];
      const worker: OutboxWorker = {
        on(event, listener) {
          for (const each of workers) each.on(event, listener);
          return worker;
        },
        off(event, listener) {
          for (const each of workers) each.off(event, listener);
          return worker;
        },
        close: async () => {
          await Promise.all(workers.map((each) => each.close()));
        },
      };
      return worker;
    },

    async counts(options) {
      if (accountOf(options) !== undefined) return of(options).counts(options);
      const all = await Promise.all(shards.map((shard) => shard.counts()));
      const sum: OutboxCounts = { waiting: 0, delayed: 0, active: 0, delivered: 0, failed: 0, unknown: 0 };
      let orphaned = 0;
      for (const counts of all) {
        sum.waiting += counts.waiting;
        sum.delayed += counts.delayed;
        sum.active += counts.active;
        sum.delivered += counts.delivered;
        sum.failed += counts.failed;
        sum.unknown += counts.unknown;
        orphaned += counts.orphaned ?? 0;
      }
      if (orphaned > 0) sum.orphaned = orphaned;
      return sum;
    },

    get: (key, options) => of(options).get(key, options),

    cancel: (key, options) => of(options).cancel(key, options),

    async accounts(options) {
      const top = options?.top;
      checkTop(top);
      // Each account is in one shard: the lists joined, busiest first again.
      const all = (await Promise.all(shards.map((shard) => shard.accounts()))).flat().sort(byBusiest);
      return top === undefined ? all : all.slice(0, top);
    },

    pause: (options) => of(options).pause(options),

    resume: (options) => of(options).resume(options),

    cancelAll: (options) => of(options).cancelAll(options),

    async drain(options) {
      if (accountOf(options) !== undefined) return of(options).drain(options);
      const all = await Promise.all(shards.map((shard) => shard.drain()));
      return { cancelled: all.reduce((n, part) => n + part.cancelled, 0) };
    },

    async waitFor(keys, options) {
      if (keys !== 'all' || accountOf(options) !== undefined) return of(options).waitFor(keys, options);
      // Every shard's open jobs; the first rejection (a timeout, an abort, a close) ends every wait.
      const stop = new AbortController();
      const given = options?.signal;
      const forward = () => stop.abort(given?.reason);
      if (given?.aborted) forward();
      else given?.addEventListener('abort', forward, { once: true });
      try {
        const parts = await Promise.all(
          shards.map((shard) =>
            shard.waitFor('all', { ...options, signal: stop.signal }).catch((error: unknown) => {
              stop.abort(error);
              throw error;
            }),
          ),
        );
        const states = new Map<string, OutboxJobStatus>();
        for (const part of parts) for (const [key, status] of part) states.set(key, status);
        return states;
      } finally {
        given?.removeEventListener('abort', forward);
      }
    },

    on(event, listener) {
      for (const shard of shards) shard.on(event, listener);
      return outbox;
    },

    off(event, listener) {
      for (const shard of shards) shard.off(event, listener);
      return outbox;
    },

    close() {
      closing ??= Promise.all(shards.map((shard) => shard.close())).then(closeConnection);
      return closing;
    },
  };
  return outbox;
}
