/**
 * The producer calls (`inbox.store`, `outbox.add`, `addMany`, `get`, `counts`) give up on a Redis that
 * cannot be reached instead of waiting for it to come back: a webhook must answer before the OA's
 * delivery times out (an error answer makes the OA deliver again), and an app's own request handler
 * must not hang. They run on a connection of their own for that; the workers keep theirs, which wait
 * through a reconnection, so that a Redis restart only delays the work.
 */
import { isOAError, OAConnectionError } from '../errors.js';
import type { IORedisLike } from './load.js';

/** How long a producer call waits for Redis: to be connected, then for each answer. */
const REACH_MS = 5_000;

/**
 * The ioredis options of the producer connection. BullMQ's `Queue` accepts them: it requires
 * `maxRetriesPerRequest: null` of a worker's (blocking) connections only.
 */
export const PRODUCER_OPTIONS = {
  // A command cut off by a lost connection fails with it, and one sent while it is down fails when the
  // next reconnection attempt fails (a refused one: at once), instead of waiting for one that succeeds;
  // ioredis drops them, so that none is run later behind the caller's back. (One cut off may have run.)
  maxRetriesPerRequest: 0,
  // A command Redis does not answer at all (a host gone without closing the connection) fails too.
  commandTimeout: REACH_MS,
  // A copy of a caller's client made with lazyConnect would wait for its first command to connect.
  lazyConnect: false,
} as const;

/** What the readiness wait needs of an ioredis client (a `Redis` or a `Cluster`). */
interface Connectable {
  status?: unknown;
  connect?(): Promise<unknown>;
  once(event: 'ready' | 'end', listener: () => void): unknown;
  off(event: 'ready' | 'end', listener: () => void): unknown;
}

/** The readiness wait ran out; {@link rejectUnreachable} names the call. */
class NotConnected extends Error {}

/**
 * Resolves once `client` is connected and ready, at most {@link REACH_MS} from now. A hand-made bound:
 * ioredis has no ready timeout, and BullMQ's `Queue` waits for the first `ready` without one, so a
 * queue opened while Redis is down would hang.
 */
export function whenReady(client: IORedisLike): Promise<void> {
  const c = client as unknown as Connectable;
  if (typeof c.status !== 'string' || c.status === 'ready') return Promise.resolve();
  if (c.status === 'end') return Promise.reject(new NotConnected('its connection is closed'));
  // A client of the caller's made with lazyConnect connects on its first command, or on connect().
  if (c.status === 'wait') c.connect?.().catch(() => {});
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      c.off('ready', onReady);
      c.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    };
    const onReady = () => settle();
    const onEnd = () => settle(new NotConnected('its connection is closed'));
    const timer = setTimeout(() => settle(new NotConnected(`not connected within ${REACH_MS} ms`)), REACH_MS);
    c.once('ready', onReady);
    c.once('end', onEnd);
  });
}

// What ioredis (and BullMQ) reject a command with when the connection is lost or does not answer: the
// retry limit above, its timeout, an aborted pipeline or transaction, a closed or unwritable connection.
const LOST =
  /^(Command timed out|Command aborted due to connection close|Connection is closed|Stream isn't writeable)/;

function reasonOf(error: unknown): string | undefined {
  if (error instanceof NotConnected) return error.message;
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (name === 'MaxRetriesPerRequestError') return 'the connection is down';
  if (typeof message === 'string' && LOST.test(message)) {
    return message.startsWith('Command timed out')
      ? `no answer within ${REACH_MS} ms`
      : 'the connection is down';
  }
  return undefined;
}

/**
 * Makes the `names` calls of `target` (in place; each a function that works unbound, as before) reject
 * with an `OAConnectionError` when Redis could not be reached. Any other error passes as it is (an
 * `OAValidationError` of bad input, a Redis error answer). The message names the call and the reason,
 * never the URL (it may hold a password).
 */
export function rejectUnreachable<T extends object>(
  target: T,
  what: string,
  names: readonly (keyof T & string)[],
): T {
  const calls = target as Record<string, unknown>;
  for (const name of names) {
    const call = calls[name] as (...args: unknown[]) => Promise<unknown>;
    calls[name] = (...args: unknown[]) =>
      call.apply(target, args).catch((error: unknown) => {
        const reason = isOAError(error) ? undefined : reasonOf(error);
        if (reason === undefined) throw error;
        throw new OAConnectionError(`${what}.${name}: Redis could not be reached (${reason})`, {
          cause: error,
        });
      });
  }
  return target;
}
