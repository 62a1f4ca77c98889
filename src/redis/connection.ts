/** The Redis connection of `oa-messaging/redis`: the caller's client, or one made from a URL on first use. */
import { createHash } from 'node:crypto';
import { OAConfigError, OAConnectionError } from '../errors.js';
import { PRODUCER_OPTIONS } from '../queue/reach.js';
import { quitOrDrop } from './quit.js';

/**
 * How long one call to Redis may take by default, connecting included: long past any answer of a
 * Redis that works, short enough that a webhook still answers and a send still fails in seconds.
 */
const COMMAND_TIMEOUT_MS = 2_000;

/**
 * What `oa-messaging/redis` needs of a Redis client: Lua scripts, nothing else. An ioredis `Redis` or
 * `Cluster` fits (every script touches keys of one hash slot).
 */
export interface RedisClient {
  /** Runs a Lua script. */
  eval(script: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
  /** Runs a Lua script by its SHA-1. */
  evalsha(sha1: string, numkeys: number, ...args: (string | number)[]): Promise<unknown>;
}

/** Where to find Redis: a URL (ioredis, loaded on first use), or a client of yours. */
export type RedisConnectionOptions =
  | {
      /**
       * e.g. `redis://127.0.0.1:6379` or `rediss://user:pass@host:6380/0`; needs `npm install ioredis`.
       * The connection made from it gives up on a command as soon as a reconnection attempt fails
       * (`maxRetriesPerRequest: 0`) or after `commandTimeoutMs` without an answer (`commandTimeout`),
       * and keeps reconnecting in the background, so that it works again once Redis is back.
       */
      url: string;
      /** Not with `url`. */
      client?: undefined;
    }
  | {
      /**
       * An ioredis `Redis` or `Cluster` (or anything with `eval` and `evalsha`); `close()` leaves it
       * open. It is used as it is: each call still gives up after `commandTimeoutMs`, but the command
       * stays with your client, which may run it once Redis answers again (ioredis by default keeps it
       * through 20 reconnection attempts). Make it with `maxRetriesPerRequest: 0` and a `commandTimeout`
       * to have ioredis drop it instead, as the connection made from `url` does.
       */
      client: RedisClient;
      /** Not with `client`. */
      url?: undefined;
    };

/** A client this module made, and so closes. */
interface OwnedClient extends RedisClient {
  /** `ready` once connected; `connecting`, `reconnecting`... while Redis cannot be reached. */
  readonly status: string;
  quit(): Promise<unknown>;
  disconnect(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** ioredis's `Redis` class, as far as it is used here. */
type RedisConstructor = new (url: string, options: Record<string, unknown>) => OwnedClient;

/** A Lua script and its SHA-1, so that Redis runs it from its script cache after the first call. */
export interface Script {
  source: string;
  sha1: string;
}

export function script(source: string): Script {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

const MISSING_IOREDIS =
  'oa-messaging/redis needs the ioredis package, an optional peer dependency: npm install ioredis';

/** ioredis, imported on first use so that loading `oa-messaging/redis` opens nothing and needs nothing. */
async function loadIoredis(): Promise<RedisConstructor> {
  let mod: { default?: unknown; Redis?: unknown };
  try {
    mod = (await import('ioredis')) as { default?: unknown; Redis?: unknown };
  } catch (error) {
    throw new OAConfigError(MISSING_IOREDIS, { cause: error });
  }
  const Redis = mod.Redis ?? mod.default;
  if (typeof Redis !== 'function') throw new OAConfigError(MISSING_IOREDIS);
  return Redis as RedisConstructor;
}

/**
 * The connection shared by the token store, the renewal lock and the limiters of one coordination (or
 * used by one dedupe store). Every Redis call of `oa-messaging/redis` goes through {@link run}, which
 * gives up after `timeoutMs`.
 */
export class Connection {
  readonly #url: string | undefined;
  readonly #timeoutMs: number;
  #client: Promise<RedisClient> | undefined;
  #owned: OwnedClient | undefined;
  #closed = false;
  /** Rejects when close() drops a connection that is not ready: the calls waiting on it fail then. */
  readonly #dropped: Promise<never>;
  #drop: (error: Error) => void = () => {};

  constructor(target: { url: string } | { client: RedisClient }, timeoutMs = COMMAND_TIMEOUT_MS) {
    this.#timeoutMs = timeoutMs;
    this.#dropped = new Promise<never>((_resolve, reject) => {
      this.#drop = reject;
    });
    // Only ever raced against commands, which handle it.
    this.#dropped.catch(() => {});
    if ('client' in target) {
      this.#url = undefined;
      this.#client = Promise.resolve(target.client);
    } else {
      this.#url = target.url;
    }
  }

  #connect(): Promise<RedisClient> {
    if (this.#closed) {
      return Promise.reject(
        new OAConnectionError('Not sent: the Redis coordination is closed', { failure: 'final' }),
      );
    }
    if (!this.#client) {
      const connecting = loadIoredis().then((Redis) => {
        // As the queue's producer connection: a command sent while Redis is down fails when the next
        // reconnection attempt fails, dropped by ioredis instead of being run once Redis is back; one
        // that Redis does not answer fails after the bound (a paused Redis may still run it later).
        const client = new Redis(this.#url ?? '', { ...PRODUCER_OPTIONS, commandTimeout: this.#timeoutMs });
        // Without a listener ioredis prints every reconnection failure; commands still reject.
        client.on('error', () => {});
        this.#owned = client;
        return client;
      });
      // A failed import is tried again on the next call (the package may have been installed since).
      connecting.catch(() => {
        if (this.#client === connecting) this.#client = undefined;
      });
      this.#client = connecting;
    }
    return this.#client;
  }

  /**
   * Runs `script` with `keys` and `args`, within `timeoutMs` from now (a NOSCRIPT retry included).
   * Failures of Redis itself, and no answer in time, become `OAConnectionError` (nothing was sent to
   * the API); a missing ioredis stays `OAConfigError`. The bound is a timer raced with the command, so
   * that it holds for a client of the caller's too, whatever its own settings.
   */
  async run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${this.#timeoutMs} ms (commandTimeoutMs)`)),
        this.#timeoutMs,
      );
    });
    // Only ever raced against commands, which handle it.
    late.catch(() => {});
    // ioredis keeps a command queued while it reconnects, and a disconnect() then does not fail it.
    const answer = (command: Promise<unknown>) => Promise.race([command, this.#dropped, late]);
    try {
      return await this.#run(answer, script, keys, args);
    } finally {
      clearTimeout(timer);
    }
  }

  async #run(
    answer: (command: Promise<unknown>) => Promise<unknown>,
    script: Script,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const client = await this.#connect();
    try {
      try {
        return await answer(client.evalsha(script.sha1, keys.length, ...keys, ...args));
      } catch (error) {
        // The script cache is empty after a restart, a failover or SCRIPT FLUSH.
        if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
        return await answer(client.eval(script.source, keys.length, ...keys, ...args));
      }
    } catch (error) {
      // Nothing was sent: the request waits on Redis before it leaves.
      throw new OAConnectionError(`Redis coordination failed: ${(error as Error)?.message ?? error}`, {
        cause: error,
        failure: 'not_sent',
      });
    }
  }

  /** Quits the connection this module made; a client passed in stays open. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#url === undefined) return;
    await this.#client?.catch(() => {});
    const owned = this.#owned;
    if (!owned) return;
    await quitOrDrop(owned, () => this.#dropAll(owned));
  }

  #dropAll(owned: OwnedClient): void {
    owned.disconnect();
    this.#drop(new Error('closed while Redis could not be reached'));
  }
}

/** A positive number of ms option, rounded up (Redis takes whole milliseconds); `fallback` when unset. */
export function positive(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new OAConfigError(`${name} must be a positive number of ms`);
  }
  return Math.ceil(value);
}

/**
 * The connection for `{ url }` or `{ client }` options, checked: exactly one of them, a non-empty URL,
 * a client with `eval` and `evalsha`, a positive `commandTimeoutMs`. `what` names the function in the
 * error.
 */
export function connectionFrom(
  options: { url?: unknown; client?: unknown; commandTimeoutMs?: unknown },
  what: string,
): Connection {
  const { url, client } = options;
  if ((url === undefined) === (client === undefined)) {
    throw new OAConfigError(`${what} needs exactly one of url and client`);
  }
  const timeoutMs = positive('commandTimeoutMs', options.commandTimeoutMs, COMMAND_TIMEOUT_MS);
  if (url !== undefined) {
    if (typeof url !== 'string' || url === '') {
      throw new OAConfigError('url must be a Redis URL such as redis://127.0.0.1:6379');
    }
    return new Connection({ url }, timeoutMs);
  }
  const candidate = client as Partial<RedisClient> | null;
  if (typeof candidate?.eval !== 'function' || typeof candidate.evalsha !== 'function') {
    throw new OAConfigError(
      'client must be a Redis client with eval and evalsha (an ioredis Redis or Cluster)',
    );
  }
  return new Connection({ client: candidate as RedisClient }, timeoutMs);
}
