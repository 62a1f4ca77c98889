import { isMessageEvent, type WebhookEvent } from './schemas.js';

/**
 * Where a message stands in a {@link WebhookDedupeStore}: `claimed` (this delivery now owns it and
 * processes it), `in-flight` (another delivery owns it and is processing it) or `done` (processed).
 */
export type WebhookDedupeState = 'claimed' | 'in-flight' | 'done';

/**
 * Where the webhook handlers record which messages are being processed and which were processed. The
 * in-memory store ({@link MemoryDedupeStore}) serves one process; `createRedisDedupeStore` from
 * `oa-messaging/redis` serves every instance behind a load balancer. Methods may return promises; a
 * store that throws makes the handler process the delivery anyway (a duplicate beats a lost message).
 * The handler waits for each call as long as it takes: a store bounds its own calls (the Redis one
 * gives up after its `commandTimeoutMs`), so that a delivery is answered before the sender gives up.
 */
export interface WebhookDedupeStore {
  /**
   * Claims `key` for the delivery `owner` unless it is claimed or done. A claim lasts `claimTtlMs`
   * unless extended, completed or released, so that a process that died while holding it does not hold
   * it forever.
   */
  claim(key: string, owner: string, claimTtlMs: number): WebhookDedupeState | Promise<WebhookDedupeState>;
  /**
   * Extends `owner`'s claim on `key` to last `claimTtlMs` from now, only if it is still `owner`'s (an
   * expired claim, another delivery's or a done key is left alone): `true` when extended, else
   * `false`. A delivery calls it every third of `claimTtlMs` while its `onEvent` runs, so that a slow
   * `onEvent` keeps its message. Optional: a store without it keeps today's behaviour, a claim that
   * lasts `claimTtlMs` however long `onEvent` takes (set `claimTtlMs` longer than `onEvent` ever takes).
   */
  extend?: ((key: string, owner: string, claimTtlMs: number) => boolean | Promise<boolean>) | undefined;
  /** Marks `key` processed, remembered for `ttlMs`. */
  complete(key: string, owner: string, ttlMs: number): void | Promise<void>;
  /** Gives up `owner`'s claim on `key` (its `onEvent` failed), so that the next delivery processes it. */
  release(key: string, owner: string): void | Promise<void>;
}

/** Options of the `dedupe` option of the webhook handlers. */
export interface WebhookDedupeOptions {
  /**
   * Where the keys live: share one store between instances (`createRedisDedupeStore`) to process each
   * message once across them.
   * @default a {@link MemoryDedupeStore} of `max` keys, for this handler alone
   */
  store?: WebhookDedupeStore | undefined;
  /**
   * How many message keys the default in-memory store remembers; the least recently seen is forgotten
   * first. Ignored with `store`.
   * @default 10000
   */
  max?: number | undefined;
  /**
   * How long a processed message is remembered, in milliseconds.
   * @default 3600000 (one hour)
   */
  ttlMs?: number | undefined;
  /**
   * How long a claim lasts unless extended, that is how soon a redelivery takes over a message whose
   * delivery died in `onEvent` (its process crashed or was killed). A live delivery extends its claim
   * every third of this while `onEvent` runs, however long that takes, so this is no bound on
   * `onEvent` (an `onEvent` that never settles keeps its message while its process lives). With a
   * store that has no `extend`, claims are not extended: then make it longer than `onEvent` ever takes.
   * @default 60000 (one minute)
   */
  claimTtlMs?: number | undefined;
  /**
   * How long a duplicate that arrives while the first delivery is still in `onEvent` waits for its
   * outcome: 200 when it succeeded, its own `onEvent` when it failed. Past this it answers 503 so that
   * the sender tries again later.
   * @default 10000 (ten seconds)
   */
  waitTimeoutMs?: number | undefined;
}

/** The defaults `dedupe: true` stands for. */
export const DEFAULT_DEDUPE = {
  max: 10_000,
  ttlMs: 60 * 60 * 1000,
  claimTtlMs: 60 * 1000,
  waitTimeoutMs: 10 * 1000,
} as const;

/**
 * What identifies one delivery: the OA account, the callback (`CallbackCommand`), the conversation (the
 * sender, the recipient, and the group of a group message) and Tencent's `MsgKey` (else `MsgId`, else
 * `MsgSeq`/`MsgRandom`/`MsgTime`, which is what `MsgKey` is made of; a group message names the random
 * number `Random`). `MsgKey` alone names a message, not an event about it: the after-send callback and
 * the withdraw of one message share it, and the second is no redelivery of the first. `undefined` when
 * the event carries no message id, or is not a message: such an event is never a duplicate.
 */
export function dedupeKeyOf(event: WebhookEvent): string | undefined {
  if (!isMessageEvent(event)) return undefined;
  const { data } = event;
  // `||`, not `??`: an empty MsgKey must not hide the MsgId.
  let id: string | undefined = data.MsgKey || data.MsgId || undefined;
  const random = data.MsgRandom ?? data.Random;
  if (id === undefined && data.MsgSeq !== undefined && random !== undefined && data.MsgTime !== undefined) {
    id = `${data.MsgSeq}_${random}_${data.MsgTime}`;
  }
  if (id === undefined || id === '') return undefined;
  // Two accounts served by one receiver must not suppress each other's messages, nor two groups, nor
  // two callbacks about one message. A redelivery repeats every one of these fields.
  return JSON.stringify([
    event.username ?? '',
    data.CallbackCommand ?? '',
    data.GroupId ?? '',
    data.From_Account ?? '',
    data.To_Account ?? '',
    id,
  ]);
}

interface Entry {
  key: string;
  /** The delivery that holds the claim; `undefined` once done. */
  owner: string | undefined;
  expiresAt: number;
  /** Neighbours in least-recently-used order: `older` towards the first to forget. */
  older: Entry | undefined;
  newer: Entry | undefined;
}

/**
 * The default {@link WebhookDedupeStore}: a bounded LRU map in this process's memory. Behind a load
 * balancer with several instances, a redelivery may reach another instance: use a shared store there.
 */
export class MemoryDedupeStore implements WebhookDedupeStore {
  // The entries are also linked in least-recently-used order, so that forgetting the oldest is O(1):
  // walking a Map from its start instead skips every slot deleted since V8 last compacted it, which
  // made each delivery cost a few microseconds per thousand keys held.
  readonly #entries = new Map<string, Entry>();
  #oldest: Entry | undefined;
  #newest: Entry | undefined;
  readonly #max: number;
  readonly #now: () => number;

  /**
   * @param options - `max`: how many keys to keep, the least recently used forgotten first (default
   * 10,000); `now`: the clock, for tests.
   */
  constructor(options: { max?: number; now?: () => number } = {}) {
    this.#max = Math.max(1, Math.floor(options.max ?? DEFAULT_DEDUPE.max));
    this.#now = options.now ?? Date.now;
  }

  /** Number of keys held (expired ones may still count until they are next touched). */
  get size(): number {
    return this.#entries.size;
  }

  claim(key: string, owner: string, claimTtlMs: number): WebhookDedupeState {
    const now = this.#now();
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.expiresAt > now) {
      this.#use(entry);
      return entry.owner === undefined ? 'done' : 'in-flight';
    }
    this.#put(key, owner, now + claimTtlMs, entry, now);
    return 'claimed';
  }

  complete(key: string, _owner: string, ttlMs: number): void {
    // Processed is processed, even when the claim had expired meanwhile.
    const now = this.#now();
    this.#put(key, undefined, now + ttlMs, this.#entries.get(key), now);
  }

  extend(key: string, owner: string, claimTtlMs: number): boolean {
    const now = this.#now();
    const entry = this.#entries.get(key);
    // Expired is lost, as in Redis where the key is gone: a redelivery may have claimed it meanwhile.
    if (entry === undefined || entry.owner !== owner || entry.expiresAt <= now) return false;
    entry.expiresAt = now + claimTtlMs;
    // Most recently used: a message in flight is the last to be forgotten past `max`.
    this.#use(entry);
    return true;
  }

  release(key: string, owner: string): void {
    // Only our own claim: after it expired, another delivery may hold the key.
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.owner === owner) this.#unlink(entry);
  }

  /** Sets `key` (held in `entry`, if anywhere) as the most recently used entry, then forgets past `max`. */
  #put(
    key: string,
    owner: string | undefined,
    expiresAt: number,
    entry: Entry | undefined,
    now: number,
  ): void {
    if (entry === undefined) {
      const added: Entry = { key, owner, expiresAt, older: undefined, newer: undefined };
      this.#entries.set(key, added);
      this.#use(added);
    } else {
      entry.owner = owner;
      entry.expiresAt = expiresAt;
      this.#use(entry);
    }
    this.#evict(now);
  }

  /** Makes `entry` the most recently used one. */
  #use(entry: Entry): void {
    if (entry === this.#newest) return;
    this.#detach(entry);
    entry.older = this.#newest;
    if (this.#newest) this.#newest.newer = entry;
    else this.#oldest = entry;
    this.#newest = entry;
  }

  /** Takes `entry` out of the order (a new one is in none). */
  #detach(entry: Entry): void {
    if (entry.older) entry.older.newer = entry.newer;
    else if (this.#oldest === entry) this.#oldest = entry.newer;
    if (entry.newer) entry.newer.older = entry.older;
    else if (this.#newest === entry) this.#newest = entry.older;
    entry.older = entry.newer = undefined;
  }

  /** Forgets `entry`. */
  #unlink(entry: Entry): void {
    this.#detach(entry);
    this.#entries.delete(entry.key);
  }

  /** Forgets the least recently used keys past `max`, and expired ones at that end. */
  #evict(now: number): void {
    for (let oldest = this.#oldest; oldest !== undefined; oldest = this.#oldest) {
      if (this.#entries.size <= this.#max && oldest.expiresAt > now) break;
      this.#unlink(oldest);
    }
  }
}
