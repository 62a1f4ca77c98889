/** The Redis connections of an outbox or inbox: from a URL (opened on first use) or the caller's client. */
import { OAConfigError } from '../errors.js';
import { connectRedis, type IORedisLike } from './load.js';

/** Where the queue's Redis is: a URL (ioredis, loaded on first use), or an ioredis client of yours. */
export type QueueConnectionOptions =
  | {
      /** e.g. `redis://127.0.0.1:6379`; needs `npm install bullmq ioredis`. */
      url: string;
      /** Not with `url`. */
      client?: never;
    }
  | {
      /**
       * An ioredis `Redis` made with `maxRetriesPerRequest: null` (as BullMQ requires); `close()` leaves
       * it open.
       */
      client: unknown;
      /** Not with `client`. */
      url?: never;
    };

/** The connections one outbox or inbox uses, and which of them it closes. */
export class QueueConnection {
  readonly #url: string | undefined;
  readonly #client: IORedisLike | undefined;
  #commands: Promise<IORedisLike> | undefined;
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
    this.#url = url as string | undefined;
    this.#client = client as IORedisLike | undefined;
  }

  /** A new connection of this module's own (closed by `close()`), or the caller's client. */
  open(): Promise<IORedisLike> {
    if (this.#client) return Promise.resolve(this.#client);
    const opening = connectRedis(this.#url ?? '');
    this.#owned.add(opening);
    opening.catch(() => this.#owned.delete(opening));
    return opening;
  }

  /** The connection shared by the queue and the commands of this module, opened once. */
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
    await Promise.all(
      owned.map(async (opening) => {
        const client = await opening.catch(() => undefined);
        if (!client) return;
        try {
          await client.quit();
        } catch {
          client.disconnect();
        }
      }),
    );
  }
}
