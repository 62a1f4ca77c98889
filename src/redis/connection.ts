/**
 * The one Redis connection wrapper of `oa-messaging/redis` and `oa-messaging/queue`: a client made
 * from a URL on first use, or the caller's client (or a bounded copy of it), with its readiness wait,
 * its bounded scripts and its closing (quit, or drop when Redis is gone).
 */
import * as z from 'zod/mini';
import { isOAError, OAConnectionError } from '../errors.js';
import { aString, checked, isObject, optionsOf, positive } from '../schemas/option-checks.js';
import {
  type IORedis,
  loadIoredis,
  loadIoredisCluster,
  type RedisClient,
  type RedisEntry,
} from './client.js';
import { evictionPolicy, evictionWarning } from './eviction.js';
import { boundedOptions, Unreachable, unreachableReason, WAITING_OPTIONS, whenReady } from './reach.js';
import { runScript, type Script } from './script.js';

/**
 * How long one call to Redis may take by default, connecting included: long past any answer of a
 * Redis that works, short enough that a webhook still answers and a send still fails in seconds.
 */
const COMMAND_TIMEOUT_MS = 2_000;

/** How long a ready connection's QUIT may take before the connection is dropped. */
const QUIT_MS = 1000;

/** Where to find Redis: a URL (ioredis, loaded on first use), or a client of yours. */
export type RedisConnectionOptions =
  | {
      /**
       * e.g. `redis://127.0.0.1:6379` or `rediss://user:pass@host:6380/0`; needs `npm install ioredis`.
       * A Redis Cluster: its nodes (some or all) separated by commas,
       * `redis://user:pass@10.0.0.1:6379,10.0.0.2:6379,10.0.0.3:6379` (an ioredis `Cluster`).
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

/** How a {@link RedisConnection} behaves. */
export interface ConnectionSettings {
  /** Names the feature in its errors, e.g. `Redis coordination`. */
  feature: string;
  /** The entry point it serves, for the error of a missing ioredis. */
  entry: RedisEntry;
  /**
   * How long a command (and the readiness wait) may take; the connection made from a URL, or the copy
   * of a caller's client, gives up on a lost connection (see `boundedOptions`). `undefined`: it waits
   * through reconnections instead, as BullMQ's workers need.
   */
  timeoutMs?: number | undefined;
  /**
   * Use a caller's client through a bounded copy of it (`duplicate()`, closed by `close()`) when it
   * has one (a `Redis` or a `Cluster`); otherwise it is used as it is.
   */
  copyClient?: boolean | undefined;
  /**
   * Told once, after the connection is first opened, when that Redis evicts keys (its
   * `maxmemory-policy` is not `noeviction`), with the warning to give.
   */
  warn?: ((message: string) => void) | undefined;
}

/**
 * One Redis connection: opened on first use (a failed open is tried again on the next call), closed
 * once. It closes only what it made; a caller's client stays open.
 */
export class RedisConnection {
  readonly #target: { url: string } | { client: RedisClient };
  readonly #settings: ConnectionSettings;
  #opening: Promise<IORedis> | undefined;
  #owned: IORedis | undefined;
  #lastError: Error | undefined;
  #closed = false;
  #evictionChecked = false;
  /** Rejects when the connection is dropped: the calls still waiting on it fail then. */
  readonly #dropped: Promise<never>;
  #drop: (error: Error) => void = () => {};

  constructor(target: { url: string } | { client: RedisClient }, settings: ConnectionSettings) {
    this.#target = target;
    this.#settings = settings;
    this.#dropped = new Promise<never>((_resolve, reject) => {
      this.#drop = reject;
    });
    // Only ever raced against commands, which handle it.
    this.#dropped.catch(() => {});
  }

  /** Whether it is a Redis Cluster's: a `Cluster` given, or a URL of several nodes. */
  get isCluster(): boolean {
    return isClusterTarget(this.#target);
  }

  /** The client, opened on first use; rejects once closed. */
  client(): Promise<IORedis> {
    if (this.#closed) {
      return Promise.reject(
        new OAConnectionError(`Not sent: the ${this.#settings.feature} is closed`, { failure: 'final' }),
      );
    }
    if (!this.#opening) {
      const opening = this.#open();
      opening.then(
        (client) => this.#checkEviction(client),
        () => {},
      );
      opening.catch(() => {
        if (this.#opening === opening) this.#opening = undefined;
      });
      this.#opening = opening;
    }
    return this.#opening;
  }

  async #open(): Promise<IORedis> {
    const { timeoutMs, copyClient, entry } = this.#settings;
    const options = timeoutMs === undefined ? WAITING_OPTIONS : boundedOptions(timeoutMs);
    if ('client' in this.#target) {
      const given = this.#target.client as IORedis;
      if (!copyClient || typeof given.duplicate !== 'function') return given;
      if (given.isCluster !== true) return this.#own(given.duplicate(options));
      // A Cluster's copy: its nodes, its options, and its nodes' options with these (a Cluster's
      // duplicate() replaces its options one by one, redisOptions as a whole).
      const { redisOptions } =
        (given as { options?: { redisOptions?: Record<string, unknown> } }).options ?? {};
      return this.#own(given.duplicate([], clusterOptions(redisOptions ?? {}, options, timeoutMs)));
    }
    const cluster = clusterUrl(this.#target.url);
    if (cluster) {
      const Cluster = await loadIoredisCluster(entry);
      return this.#own(new Cluster(cluster.nodes, clusterOptions(cluster.options, options, timeoutMs)));
    }
    const Redis = await loadIoredis(entry);
    return this.#own(new Redis(this.#target.url, options));
  }

  /** Warns once when this Redis evicts keys (see `evictionPolicy`). */
  #checkEviction(client: IORedis): void {
    const { warn, feature } = this.#settings;
    if (!warn || this.#evictionChecked) return;
    this.#evictionChecked = true;
    void evictionPolicy(client).then((policy) => {
      if (policy !== undefined && !this.#closed) warn(evictionWarning(feature, policy));
    });
  }

  #own(client: IORedis): IORedis {
    // Without a listener ioredis prints every reconnection failure; commands wait or reject anyway. The
    // last one names the reason in an error (a refused connection).
    client.on('error', (error) => {
      this.#lastError = error;
    });
    // A Cluster with no slot served (its nodes never joined) reports ready and closes at once, without
    // an error: name that as the reason its commands wait.
    if (client.isCluster === true) {
      client.on('ready', () => {
        if (client.status !== 'ready') this.#lastError = new Error("Cluster isn't ready: no slot is served");
      });
    }
    this.#owned = client;
    return client;
  }

  /** The client once it is connected and ready, within `timeoutMs` when bounded. */
  async ready(): Promise<IORedis> {
    const client = await this.client();
    const { timeoutMs } = this.#settings;
    if (timeoutMs !== undefined) await Promise.race([whenReady(client, timeoutMs), this.#dropped]);
    return client;
  }

  /**
   * Runs `script` with `keys` and `args`, within `timeoutMs` from now when bounded (a NOSCRIPT retry
   * included). Failures of Redis itself, and no answer in time, become `OAConnectionError` naming the
   * feature (nothing was sent to the API); a missing ioredis stays `OAConfigError`. The bound is a
   * timer raced with the command, so that it holds for a client of the caller's too, whatever its own
   * settings.
   */
  async run(script: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
    const client = await this.client();
    const { timeoutMs } = this.#settings;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      if (timeoutMs === undefined) return;
      timer = setTimeout(() => reject(new Unreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
    });
    // Only ever raced against commands, which handle it.
    late.catch(() => {});
    // ioredis keeps a command queued while it reconnects, and a disconnect() then does not fail it.
    const answer = (command: Promise<unknown>) => Promise.race([command, this.#dropped, late]);
    try {
      // A Cluster made here takes no command before it is ready (see #open).
      if (timeoutMs !== undefined && client.isCluster === true && client.status !== 'ready') {
        await answer(whenReady(client, timeoutMs));
      }
      return await runScript(client, script, keys, args, answer);
    } catch (error) {
      throw this.failure(error);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Why `error` of a command on this connection says Redis could not be reached (e.g. `connection
   * refused`, `no answer within 2000 ms`), or `undefined` for any other error.
   */
  unreachable(error: unknown): string | undefined {
    return unreachableReason(error, this.#settings.timeoutMs, this.#lastError);
  }

  /** `error` of a call of this connection as the `OAConnectionError` (not sent) it is for the API call. */
  failure(error: unknown): unknown {
    if (isOAError(error)) return error;
    const reason = this.unreachable(error);
    const { feature } = this.#settings;
    const message =
      reason === undefined
        ? `${feature} failed: ${(error as Error)?.message ?? error}`
        : `${feature}: Redis could not be reached (${reason})`;
    return new OAConnectionError(message, { cause: error, failure: 'not_sent' });
  }

  /**
   * Quits the connection it made (the answers to what was sent before still arrive), within 1 s; one
   * that is not ready is dropped at once: a QUIT waits behind every command queued for a reconnection
   * (forever on a connection made for BullMQ), and one on a connection that lost Redis without
   * noticing yet waits for a reconnection, so a shutdown would stall. A caller's client stays open.
   * Safe to call twice.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#opening?.catch(() => {});
    const owned = this.#owned;
    if (!owned) return;
    if (owned.status !== 'ready') return this.drop();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), QUIT_MS);
    });
    try {
      if ((await Promise.race([owned.quit(), late])) === 'late') this.drop();
    } catch {
      this.drop();
    } finally {
      clearTimeout(timer);
    }
  }

  /** Drops the connection it made at once; the calls waiting on it fail. */
  drop(): void {
    this.#owned?.disconnect();
    this.#drop(new Unreachable('closed while Redis could not be reached'));
  }
}

/**
 * The options of a `Cluster` made here (from a URL, or as a copy of a caller's): its nodes' options
 * `perNode` with this connection's `options`, bounded when `timeoutMs` is set (see `boundedOptions`).
 */
function clusterOptions(
  perNode: Record<string, unknown>,
  options: Record<string, unknown>,
  timeoutMs: number | undefined,
): Record<string, unknown> {
  const { lazyConnect: _, ...own } = options;
  return {
    redisOptions: { ...perNode, ...own },
    lazyConnect: false,
    // Ready once the slots are known: its CLUSTER INFO check costs a first call about 50 ms more,
    // and a cluster that is down answers CLUSTERDOWN, an unreachable Redis for these calls.
    enableReadyCheck: false,
    // A bounded connection's commands fail while the cluster reconnects (its nodes' bounds do
    // not reach the Cluster's own queue, where they would wait for ever); the calls wait for it
    // to be ready first, within their bound.
    ...(timeoutMs === undefined ? {} : { enableOfflineQueue: false }),
  };
}

/**
 * The nodes and the per-node options (user, password, TLS) of a Redis Cluster's URL, one of several
 * nodes (`redis://user:pass@host1:6379,host2:6379`), or `undefined` for the URL of one Redis.
 */
function clusterUrl(url: string) {
  const match = /^(rediss?):\/\/(?:([^@/]*)@)?([^/?#]+)/.exec(url);
  const hosts = match?.[3]?.split(',').filter((host) => host !== '');
  if (!match || !hosts || hosts.length < 2) return undefined;
  const [, scheme, auth] = match;
  const nodes = hosts.map((host) => {
    const parsed = new URL(`${scheme}://${host}`);
    return { host: parsed.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(parsed.port || 6379) };
  });
  const options: Record<string, unknown> = {};
  if (auth !== undefined) {
    const credentials = new URL(`${scheme}://${auth}@${hosts[0]}`);
    if (credentials.username) options.username = decodeURIComponent(credentials.username);
    if (credentials.password) options.password = decodeURIComponent(credentials.password);
  }
  if (scheme === 'rediss') options.tls = {};
  return { nodes, options };
}

/** Whether `target` is a Redis Cluster: a `Cluster` given, or a URL of several nodes. */
function isClusterTarget(target: { url: string } | { client: unknown }): boolean {
  return 'url' in target
    ? clusterUrl(target.url) !== undefined
    : (target.client as { isCluster?: unknown } | null)?.isCluster === true;
}

/** A warning of this SDK's Redis parts where there is no logger: a process warning (`OARedisWarning`). */
export function processWarning(message: string): void {
  globalThis.process?.emitWarning?.(message, 'OARedisWarning');
}

/** A time in ms above 0 (rounded up where it is used: Redis takes whole milliseconds). */
export const REDIS_MS = positive('a positive number of ms');

/**
 * The options of `what` (`createRedisCoordination`, the stores): `{ url }` or `{ client }`, exactly one,
 * `commandTimeoutMs`, `prefix`, and the entry point's own `rules`.
 */
export function redisOptionsSchema(what: string, rules: z.core.$ZodLooseShape = {}) {
  return optionsOf(
    {
      url: checked(
        (v) => typeof v === 'string' && v !== '',
        'must be a Redis URL such as redis://127.0.0.1:6379',
      ),
      client: checked(
        (v) => isObject(v) && typeof v.eval === 'function' && typeof v.evalsha === 'function',
        'must be a Redis client with eval and evalsha (an ioredis Redis or Cluster)',
      ),
      commandTimeoutMs: REDIS_MS,
      prefix: aString,
      ...rules,
    },
    `${what} needs { url } or { client }`,
  ).check(
    z.refine((v) => !isObject(v) || (v.url === undefined) !== (v.client === undefined), {
      error: `${what} needs exactly one of url and client`,
    }),
  );
}

/**
 * The connection of `oa-messaging/redis` for `{ url }` or `{ client }` options, checked by
 * {@link redisOptionsSchema}. `feature` names the feature in the errors of its calls.
 */
export function connectionFrom(
  options: { url?: unknown; client?: unknown; commandTimeoutMs?: number | undefined },
  feature: string,
  warn: (message: string) => void = processWarning,
): RedisConnection {
  const { url, client } = options;
  const timeoutMs = Math.ceil(options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS);
  const settings = { feature, entry: 'oa-messaging/redis', timeoutMs, warn } as const;
  if (typeof url === 'string') return new RedisConnection({ url }, settings);
  return new RedisConnection({ client: client as RedisClient }, settings);
}
