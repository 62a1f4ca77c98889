/** The Redis connections of an outbox or inbox: from a URL (opened on first use) or the caller's client. */
import { OAConfigError } from '../errors.js';
import { quitOrDrop } from '../redis/quit.js';
import { connectRedis, type IORedisLike } from './load.js';
import { PRODUCER_OPTIONS } from './reach.js';

/** Where the queue's Redis is: a URL (ioredis, loaded on first use), or an ioredis client of yours. */
export type QueueConnectionOptions =
  | {
      /** e.g. `redis://127.0.0.1:6379`; needs `npm install bullmq ioredis`. */
      url: string;
      /** Not with `url`. */
      client?: undefined;
    }
  | {
      /**
       * An ioredis `Redis` made with `maxRetriesPerRequest: null` (as BullMQ requires); `close()` leaves
       * it open. The workers use it (and BullMQ's copies of it) as it is. The calls that add or read
       * (`add`, `addMany`, `get`, `counts`, `store`) use a copy of it (`duplicate()`, closed by
       * `close()`) made to reject without Redis instead of waiting for it. A client without
       * `duplicate()` (or a `Cluster`) is used as it is: a first connection is still awaited 5 s at
       * most, but a lost one as long as that client waits.
       */
      client: unknown;
      /** Not with `client`. */
      url?: undefined;
    };

/** The connections one outbox or inbox uses, and which of them it closes. */
export class QueueConnection {
  readonly #url: string | undefined;
  readonly #client: IORedisLike | undefined;
  #commands: Promise<IORedisLike> | undefined;
  #producer: Promise<IORedisLike> | undefined;
  readonly #owned = new Set<Promise<IORedisLike>>();

  constructor(options: unknown, what: string) {
    const { url, client } = (options ?? {}) as { url?: unknown; client?: unknown };
    if ((url === undefined) === (client === undefined)) {
      throw new OAConfigError(`${what} needs connection: { url } or { client }, exactly one of them`);
    }
    if (url !== undefined && (typeof url !== 'string' || url === '')) {
      throw new OAConfigError('connection.url must be a Redis URL such as redis://127.0.0.1:6379');
    }
    if (client !== undefined && typeof (client as IORedisLike | null)?.eval !== 'function') {
      throw new OAConfigError('connection.client must be an ioredis client');
    }
    // BullMQ's workers and event readers refuse (or, started in the background, silently never run on)
    // a connection that gives up on commands: say so here, where the client is given.
    const settings = (
      client as { options?: { maxRetriesPerRequest?: unknown; redisOptions?: unknown } } | undefined
    )?.options;
    const retries = (settings?.redisOptions as { maxRetriesPerRequest?: unknown } | undefined) ?? settings;
    if (client !== undefined && retries !== undefined && retries.maxRetriesPerRequest !== null) {
      throw new OAConfigError(
        'connection.client must be made with maxRetriesPerRequest: null, as BullMQ requires: new Redis(url, { maxRetriesPerRequest: null })',
      );
    }
    this.#url = url as string | undefined;
    this.#client = client as IORedisLike | undefined;
  }

  /** A new connection of this module's own (closed by `close()`), or the caller's client. */
  open(): Promise<IORedisLike> {
    if (this.#client) return Promise.resolve(this.#client);
    return this.#own(connectRedis(this.#url ?? ''));
  }

  #own(opening: Promise<IORedisLike>): Promise<IORedisLike> {
    this.#owned.add(opening);
    opening.catch(() => this.#owned.delete(opening));
    return opening;
  }

  /**
   * The connection of the producer calls, opened once: one that gives up on a lost connection instead
   * of waiting for Redis (see `PRODUCER_OPTIONS`).
   */
  producer(): Promise<IORedisLike> {
    if (!this.#producer) {
      const copy = this.#client && producerCopy(this.#client);
      const opening = copy
        ? this.#own(Promise.resolve(copy))
        : this.#client
          ? Promise.resolve(this.#client)
          : this.#own(connectRedis(this.#url ?? '', PRODUCER_OPTIONS));
      opening.catch(() => {
        if (this.#producer === opening) this.#producer = undefined;
      });
      this.#producer = opening;
    }
    return this.#producer;
  }

  /** The connection of the workers' own commands (it waits through a reconnection), opened once. */
  commands(): Promise<IORedisLike> {
    if (!this.#commands) {
      const opening = this.open();
      opening.catch(() => {
        if (this.#commands === opening) this.#commands = undefined;
      });
      this.#commands = opening;
    }
    return this.#commands;
  }

  /** Quits every connection this module opened; the caller's client stays open. */
  async close(): Promise<void> {
    const owned = [...this.#owned];
    this.#owned.clear();
    this.#commands = undefined;
    this.#producer = undefined;
    await Promise.all(
      owned.map(async (opening) => {
        const client = await opening.catch(() => undefined);
        if (client) await quitOrDrop(client);
      }),
    );
  }
}

/** A copy of an ioredis `Redis` of the caller's with `PRODUCER_OPTIONS`; `undefined` for a `Cluster`. */
function producerCopy(client: IORedisLike): IORedisLike | undefined {
  const { duplicate, isCluster } = client as { duplicate?: unknown; isCluster?: unknown };
  if (typeof duplicate !== 'function' || isCluster === true) return undefined;
  const copy = duplicate.call(client, PRODUCER_OPTIONS) as IORedisLike;
  // As for a connection of ours: no printed reconnection failures; the calls reject by themselves.
  copy.on('error', () => {});
  return copy;
}
