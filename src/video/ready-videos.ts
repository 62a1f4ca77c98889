/**
 * The memory of video tickets known to be ready: the API has no ticket status endpoint, so a ticket is
 * known ready only once a `sendVideo` of it succeeded (here, or in a process sharing the coordination).
 */
import type { ReadyVideos } from '../core/options.js';

/** How long a ready ticket is remembered: tickets are not forever, and a stale entry costs a probe. */
export const READY_VIDEO_TTL_MS = 7 * 86_400_000;
/** At most this many tickets in memory; the oldest go first. */
const MAX_TICKETS = 10_000;

/** The default {@link ReadyVideos}: this process alone, bounded in size and in time. */
export class MemoryReadyVideos implements ReadyVideos {
  /** `key ticket_id` -> when it stops counting; insertion order is age order. */
  readonly #expiresAt = new Map<string, number>();
  readonly #ttlMs: number;

  constructor(ttlMs = READY_VIDEO_TTL_MS) {
    this.#ttlMs = ttlMs;
  }

  async markReady(key: string, ticket_id: string): Promise<void> {
    const id = `${key} ${ticket_id}`;
    // Deleted first so that a ticket sent again moves to the young end.
    this.#expiresAt.delete(id);
    this.#expiresAt.set(id, Date.now() + this.#ttlMs);
    if (this.#expiresAt.size > MAX_TICKETS) {
      const oldest = this.#expiresAt.keys().next().value;
      if (oldest !== undefined) this.#expiresAt.delete(oldest);
    }
  }

  async isReady(key: string, ticket_id: string): Promise<boolean> {
    const id = `${key} ${ticket_id}`;
    const expiresAt = this.#expiresAt.get(id);
    if (expiresAt === undefined) return false;
    if (expiresAt > Date.now()) return true;
    this.#expiresAt.delete(id);
    return false;
  }
}
