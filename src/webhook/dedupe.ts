import type { WebhookEvent } from './schemas.js';

/** Options of the `dedupe` option of the webhook handlers. */
export interface WebhookDedupeOptions {
  /**
   * How many message keys to remember; the least recently seen is forgotten first.
   * @default 10000
   */
  max?: number;
  /**
   * How long a key is remembered, in milliseconds, from the first delivery.
   * @default 3600000 (one hour)
   */
  ttlMs?: number;
}

/** The defaults `dedupe: true` stands for. */
const DEFAULT_DEDUPE = { max: 10_000, ttlMs: 60 * 60 * 1000 } as const;

/**
 * What identifies a delivery of one message: the OA account, the sender and Tencent's `MsgKey` (else
 * `MsgId`, else `MsgSeq`/`MsgRandom`/`MsgTime`, which is what `MsgKey` is made of). `undefined` when the
 * event carries none of them: such an event is never treated as a duplicate.
 */
export function dedupeKeyOf(event: WebhookEvent): string | undefined {
  const { data } = event;
  // `||`, not `??`: an empty MsgKey must not hide the MsgId.
  let id: string | undefined = data.MsgKey || data.MsgId || undefined;
  if (
    id === undefined &&
    data.MsgSeq !== undefined &&
    data.MsgRandom !== undefined &&
    data.MsgTime !== undefined
  ) {
    id = `${data.MsgSeq}_${data.MsgRandom}_${data.MsgTime}`;
  }
  if (id === undefined || id === '') return undefined;
  // Two accounts served by one receiver must not suppress each other's messages.
  return JSON.stringify([event.username, data.From_Account, id]);
}

/**
 * A bounded, in-memory LRU set with a time to live. One process only: behind a load balancer with
 * several instances, a redelivery may reach another instance.
 */
export class DedupeCache {
  readonly #expiresAt = new Map<string, number>();
  readonly #max: number;
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(options: WebhookDedupeOptions = {}, now: () => number = Date.now) {
    this.#max = Math.max(1, Math.floor(options.max ?? DEFAULT_DEDUPE.max));
    this.#ttlMs = Math.max(0, options.ttlMs ?? DEFAULT_DEDUPE.ttlMs);
    this.#now = now;
  }

  /** Number of keys held (expired ones may still count until they are next touched). */
  get size(): number {
    return this.#expiresAt.size;
  }

  /**
   * Records `key` and returns `true` when it was new; returns `false` for a key seen within the TTL (and
   * marks it recently used).
   */
  claim(key: string): boolean {
    const now = this.#now();
    const expiresAt = this.#expiresAt.get(key);
    this.#expiresAt.delete(key);
    if (expiresAt !== undefined && expiresAt > now) {
      // Re-insert so Map order stays least-recently-used first; the TTL still runs from the first delivery.
      this.#expiresAt.set(key, expiresAt);
      return false;
    }
    this.#expiresAt.set(key, now + this.#ttlMs);
    this.#evict(now);
    return true;
  }

  /** Forgets `key`, so the next delivery is processed (used when handling the first one failed). */
  release(key: string): void {
    this.#expiresAt.delete(key);
  }

  #evict(now: number): void {
    for (const [key, expiresAt] of this.#expiresAt) {
      if (this.#expiresAt.size <= this.#max && expiresAt > now) break;
      this.#expiresAt.delete(key);
    }
  }
}
