/** The Redis connections of an outbox or inbox: from a URL (opened on first use) or the caller's client. */

import * as z from 'zod/mini';
import type { IORedis, RedisClient } from '../redis/client.js';
import { processWarning, RedisConnection } from '../redis/connection.js';
import { queueKeyName } from '../redis/keys.js';
import { isObject, judged, optionsOf } from '../schemas/option-checks.js';

/** How long a producer call waits for Redis: to be connected, then for each answer. */
const REACH_MS = 5_000;

/** Where the queue's Redis is: a URL (ioredis, loaded on first use), or an ioredis client of yours. */
export type QueueConnectionOptions =
  | {
      /**
       * e.g. `redis://127.0.0.1:6379`, or a Redis Cluster's nodes separated by commas
       * (`redis://10.0.0.1:6379,10.0.0.2:6379`); needs `npm install bullmq ioredis`.
       */
      url: string;
      /** Not with `url`. */
      client?: undefined;
    }
  | {
      /**
       * An ioredis `Redis` made with `maxRetriesPerRequest: null` (as BullMQ requires; a `Cluster` with
       * `redisOptions: { maxRetriesPerRequest: null }`), without `keyPrefix`; `close()` leaves
       * it open. The workers use it (and BullMQ's copies of it) as it is. The calls that add or read
       * (`add`, `addMany`, `get`, `counts`, `store`) use a copy of it (`duplicate()`, closed by
       * `close()`; a `Cluster`'s copy has the same nodes and options) made to reject without Redis
       * instead of waiting for it. A client without `duplicate()` is used as it is: a first connection
       * is still awaited 5 s at most, but a lost one as long as that client waits.
       */
      client: unknown;
      /** Not with `client`. */
      url?: undefined;
    };

/** Why `client` cannot be a queue's connection, or `undefined` when it can. */
function clientProblem(client: unknown): string | undefined {
  if (typeof (client as IORedis | null)?.eval !== 'function') return 'must be an ioredis client';
  // BullMQ's workers and event readers refuse (or, started in the background, silently never run on)
  // a connection that gives up on commands: say so here, where the client is given.
  type Settings = { maxRetriesPerRequest?: unknown; keyPrefix?: unknown; redisOptions?: Settings };
  const settings = (client as { options?: Settings }).options;
  if (settings === undefined) return undefined;
  const cluster = (client as IORedis).isCluster === true;
  // A Cluster's nodes are made with its redisOptions (ioredis's default: 20 retries).
  const perNode = cluster ? (settings.redisOptions ?? {}) : settings;
  if (settings.keyPrefix || perNode.keyPrefix) {
    return 'must be made without keyPrefix, which BullMQ refuses: give the queue a name (the name option) instead';
  }
  if (perNode.maxRetriesPerRequest === null) return undefined;
  return cluster
    ? 'must be made with redisOptions: { maxRetriesPerRequest: null } (a Cluster), as BullMQ requires: new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: null } })'
    : 'must be made with maxRetriesPerRequest: null, as BullMQ requires: new Redis(url, { maxRetriesPerRequest: null })';
}

/** The rule of the `connection` option of `what` (`createOutbox`, `createInbox`). */
export function queueConnection(what: string) {
  const needs = `${what} needs connection: { url } or { client }, exactly one of them`;
  return optionsOf(
    {
      url: judged((url) =>
        typeof url === 'string' && url !== ''
          ? undefined
          : 'must be a Redis URL such as redis://127.0.0.1:6379',
      ),
      client: judged(clientProblem),
    },
    needs,
  ).check(
    // Not when the value is no object: the object's own rule says so.
    z.refine((v) => !isObject(v) || (v.url === undefined) !== (v.client === undefined), { error: needs }),
  );
}

/**
 * The connections one outbox or inbox uses, and which of them it closes: the producer calls' (bounded,
 * {@link REACH_MS}: a webhook must answer before the OA's delivery times out, an app's own request
 * handler must not hang), the workers' own commands' and one per BullMQ worker (both wait through a
 * reconnection, so that a Redis restart only delays the work).
 */
export class QueueConnection {
  readonly #target: { url: string } | { client: RedisClient };
  readonly #what: string;
  readonly #producer: RedisConnection;
  readonly #commands: RedisConnection;
  readonly #opened = new Set<RedisConnection>();

  constructor(options: unknown, what: string) {
    // Checked by the entry point's options (queueConnection).
    const { url, client } = options as { url?: unknown; client?: unknown };
    this.#target = url !== undefined ? { url: url as string } : { client: client as RedisClient };
    this.#what = what === 'createOutbox' ? 'outbox' : 'inbox';
    // A copy of the caller's client for the producer calls, made to give up on a lost connection.
    this.#producer = this.#connection(REACH_MS, true);
    this.#commands = this.#connection(undefined);
  }

  #connection(timeoutMs: number | undefined, copyClient = false): RedisConnection {
    return new RedisConnection(this.#target, {
      feature: this.#what,
      entry: 'oa-messaging/queue',
      timeoutMs,
      copyClient,
      // Checked once, on the producer calls' connection.
      warn: copyClient ? processWarning : undefined,
    });
  }

  /** Whether it is a Redis Cluster's: a `Cluster` given, or a URL of several nodes. */
  get isCluster(): boolean {
    return this.#producer.isCluster;
  }

  /**
   * The BullMQ name of the queue `name` on this connection: `{name}` on a Redis Cluster (one hash slot
   * per queue), `name` on a single Redis (see `queueKeyName`).
   */
  queueName(name: string): string {
    return queueKeyName(name, this.#producer.isCluster);
  }

  /** A new connection of this module's own that waits through reconnections (closed by `close()`), or the caller's client. */
  open(): Promise<IORedis> {
    const connection = this.#connection(undefined);
    this.#opened.add(connection);
    return connection.client();
  }

  /**
   * A connection of its own for a blocking read (a copy of the caller's client, or one from the URL) that
   * waits through reconnections, and its `close()` (`close()` of this module closes it too).
   */
  async blocking(): Promise<{ client: IORedis; close(): Promise<void> }> {
    const connection = new RedisConnection(this.#target, {
      feature: this.#what,
      entry: 'oa-messaging/queue',
      timeoutMs: undefined,
      copyClient: true,
    });
    this.#opened.add(connection);
    const close = async () => {
      this.#opened.delete(connection);
      await connection.close();
    };
    try {
      return { client: await connection.client(), close };
    } catch (error) {
      await close();
      throw error;
    }
  }

  /** The connection of the producer calls, opened once: it gives up on a lost connection. */
  producer(): Promise<IORedis> {
    return this.#producer.client();
  }

  /**
   * The producer calls' connection once ready, at most {@link REACH_MS} from now: BullMQ's `Queue`
   * would wait for a first connection without a bound.
   */
  producerReady(): Promise<IORedis> {
    return this.#producer.ready();
  }

  /**
   * Why `error` of a producer call says Redis could not be reached (e.g. `connection refused`), or
   * `undefined` for any other error.
   */
  unreachable(error: unknown): string | undefined {
    return this.#producer.unreachable(error);
  }

  /** The connection of the workers' own commands (it waits through a reconnection), opened once. */
  commands(): Promise<IORedis> {
    return this.#commands.client();
  }

  /** Quits every connection this module opened; the caller's client stays open. */
  async close(): Promise<void> {
    const opened = [this.#producer, this.#commands, ...this.#opened];
    this.#opened.clear();
    await Promise.all(opened.map((connection) => connection.close()));
  }
}
