/** Per-user sessions of a bot: where they are kept, and the check that a session can be kept. */
import { OAValidationError } from '../errors.js';

/**
 * Where a bot keeps its sessions: one JSON text per user. {@link MemorySessionStore} keeps them in this
 * process; `createRedisSessionStore` (`oa-messaging/redis`) shares them between processes.
 */
export interface BotSessionStore {
  /** The session stored under `key`, as {@link BotSessionStore.set} received it; `undefined` when none. */
  get(key: string): Promise<string | undefined>;
  /**
   * Stores `value` under `key` for `ttlMs` milliseconds (from now: every save starts the time again).
   * With `options.fence`, a store that keeps fences refuses the write, resolving `false`, when the last
   * fenced write under `key` had a greater fence (a newer holder of the user wrote since); a store that
   * ignores `fence` keeps the last write.
   */
  // biome-ignore lint/suspicious/noConfusingVoidType: stores written before fencing resolve to nothing
  set(key: string, value: string, ttlMs: number, options?: BotSessionWriteOptions): Promise<void | boolean>;
  /** Forgets the session under `key`; refused (`false`) for a stale `options.fence`, as `set`. */
  // biome-ignore lint/suspicious/noConfusingVoidType: stores written before fencing resolve to nothing
  delete(key: string, options?: BotSessionWriteOptions): Promise<void | boolean>;
}

/** Options of a session's write (`set`, `delete`). */
export interface BotSessionWriteOptions {
  /**
   * The writer's fencing token (the `fence` of an inbox turn with `order: 'sender'`): a write whose
   * fence is lower than that of the last fenced write under its key is refused.
   */
  fence?: number | undefined;
}

/** Whether a write with `fence` may replace one made with `held`: fences only ever move forward. */
const fenceAllows = (held: number | undefined, fence: number | undefined): boolean =>
  fence === undefined || held === undefined || fence >= held;

/** A {@link BotSessionStore} in this process's memory: sessions are lost with the process. */
export class MemorySessionStore implements BotSessionStore {
  readonly #entries = new Map<string, { value: string; expiresAt: number; fence: number | undefined }>();

  /** The session under `key`, while it has not expired. */
  async get(key: string): Promise<string | undefined> {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Stores `value` under `key` until `ttlMs` from now; `false` (nothing stored) for a stale fence. */
  async set(
    key: string,
    value: string,
    ttlMs: number,
    options: BotSessionWriteOptions = {},
  ): Promise<boolean> {
    if (!fenceAllows(this.#fenceOf(key), options.fence)) return false;
    // Expired entries of users who never came back are dropped as new ones arrive.
    if (this.#entries.size >= 1024 && !this.#entries.has(key)) this.#sweep();
    this.#entries.set(key, { value, expiresAt: Date.now() + ttlMs, fence: options.fence });
    return true;
  }

  /** Forgets the session under `key`; `false` (kept) for a stale fence. */
  async delete(key: string, options: BotSessionWriteOptions = {}): Promise<boolean> {
    if (!fenceAllows(this.#fenceOf(key), options.fence)) return false;
    this.#entries.delete(key);
    return true;
  }

  #fenceOf(key: string): number | undefined {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > Date.now() ? entry.fence : undefined;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(key);
  }
}

/** Why `value` cannot be kept as JSON as it is, with its path; `undefined` when it can. */
function notJson(
  value: unknown,
  path: (string | number)[],
  seen: Set<object>,
): OAValidationError | undefined {
  const fail = (what: string) =>
    new OAValidationError(
      `session${path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')} ${what}`,
      [{ path: ['session', ...path], message: what }],
    );
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return undefined;
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : fail(`is ${value}, not a JSON number`);
  if (typeof value !== 'object') return fail(`is a ${typeof value}, which JSON cannot hold`);
  if (seen.has(value)) return fail('refers back to itself (a cycle)');
  const proto = Object.getPrototypeOf(value);
  const isArray = Array.isArray(value);
  if (!isArray && proto !== Object.prototype && proto !== null) {
    const name = (value as { constructor?: { name?: string } }).constructor?.name ?? 'object';
    return fail(
      `is a ${name}, which JSON would not give back as it is (keep plain objects, arrays, strings, numbers, booleans and null)`,
    );
  }
  seen.add(value);
  const entries: [string | number, unknown][] = isArray
    ? (value as unknown[]).map((item, index) => [index, item])
    : Object.entries(value);
  for (const [key, item] of entries) {
    // JSON drops a property whose value is undefined: that loses nothing a reader would see.
    if (item === undefined && !isArray) continue;
    const problem = notJson(item, [...path, key], seen);
    if (problem) return problem;
  }
  seen.delete(value);
  return undefined;
}

/**
 * The session as the JSON text to store: refused with `OAValidationError` (path under `session`) when
 * it holds what JSON cannot give back as it is (a function, a `Date`, a `Map`, a cycle, `NaN` ...) or is
 * over `maxBytes`.
 */
export function sessionText(value: unknown, maxBytes: number): string {
  const problem = notJson(value, [], new Set());
  if (problem) throw problem;
  const text = JSON.stringify(value);
  const bytes = new TextEncoder().encode(text).length;
  if (bytes > maxBytes) {
    throw new OAValidationError(
      `session is ${bytes} bytes of JSON, over maxSessionBytes (${maxBytes}): keep ids in it and the rest in your database`,
      [{ path: ['session'], message: `over ${maxBytes} bytes` }],
    );
  }
  return text;
}
