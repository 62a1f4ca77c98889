/**
 * Bounded Redis: how a connection of this SDK gives up on a Redis that cannot be reached instead of
 * waiting for it to come back, and how it says why. The coordination's and the dedupe store's calls
 * and the queue's producer calls (`outbox.add`, `inbox.store`...) all go through this: a send must fail
 * in seconds, a webhook must answer before the OA's delivery times out. BullMQ's workers do not: they
 * wait through a reconnection, so that a Redis restart only delays the work.
 */
import type { IORedis } from './client.js';

/**
 * The ioredis options of a bounded connection. BullMQ's `Queue` accepts them: it requires
 * `maxRetriesPerRequest: null` of a worker's (blocking) connections only.
 */
export function boundedOptions(timeoutMs: number) {
  return {
    // A command cut off by a lost connection fails with it, and one sent while it is down fails when
    // the next reconnection attempt fails (a refused one: at once), instead of waiting for one that
    // succeeds; ioredis drops them, so that none is run later behind the caller's back. (One cut off
    // may have run.)
    maxRetriesPerRequest: 0,
    // A command Redis does not answer at all (a host gone without closing the connection) fails too.
    commandTimeout: timeoutMs,
    // A copy of a caller's client made with lazyConnect would wait for its first command to connect.
    lazyConnect: false,
  } as const;
}

/** The ioredis options of a connection that waits through a reconnection, as BullMQ's workers need. */
export const WAITING_OPTIONS = { maxRetriesPerRequest: null } as const;

/** A bound of this module ran out, or the connection was dropped: the message is the reason. */
export class Unreachable extends Error {}

/**
 * Resolves once `client` is connected and ready, at most `timeoutMs` from now. A hand-made bound:
 * ioredis has no ready timeout, and BullMQ's `Queue` waits for the first `ready` without one, so a
 * queue opened while Redis is down would hang.
 */
export function whenReady(client: IORedis, timeoutMs: number): Promise<void> {
  if (typeof client.status !== 'string' || client.status === 'ready') return Promise.resolve();
  if (client.status === 'end') return Promise.reject(new Unreachable('its connection is closed'));
  // A client of the caller's made with lazyConnect connects on its first command, or on connect().
  if (client.status === 'wait') client.connect?.().catch(() => {});
  return new Promise((resolve, reject) => {
    const settle = (error?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      client.off('end', onEnd);
      if (error) reject(error);
      else resolve();
    };
    // A Cluster without a served slot (never created) says ready and closes at once, again and again.
    const onReady = () => {
      if (client.status === 'ready' || client.status === undefined) settle();
    };
    const onEnd = () => settle(new Unreachable('its connection is closed'));
    const timer = setTimeout(
      () => settle(new Unreachable(`not connected within ${timeoutMs} ms`)),
      timeoutMs,
    );
    client.on('ready', onReady);
    client.once('end', onEnd);
  });
}

// What ioredis (and BullMQ) reject a command with when the connection is lost or does not answer: the
// retry limit above, its timeout, an aborted pipeline or transaction, a closed or unwritable connection.
const LOST =
  /^(Command timed out|Command aborted due to connection close|Connection is closed|Stream isn't writeable)/;

/**
 * Why a Redis Cluster could not be used, in words that say what to check, or `undefined`: what a Redis
 * Cluster (or ioredis's `Cluster`) answers while it has no master for a slot (a failover under way, a
 * cluster that never formed) or none of its nodes can be reached.
 */
function clusterReason(error: unknown): string | undefined {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  if (typeof message !== 'string') return undefined;
  if (
    name === 'ClusterAllFailedError' ||
    /^(Failed to refresh slots cache|None of startup nodes)/.test(message)
  ) {
    return 'no node answered as a Redis Cluster node: check the node list, and that the servers run with cluster-enabled yes';
  }
  if (/^(CLUSTERDOWN|Cluster isn't ready)/.test(message)) {
    return 'the Redis Cluster is down or was never formed (a slot without a master: CLUSTER INFO must say cluster_state:ok)';
  }
  if (message.startsWith('TRYAGAIN')) return 'the Redis Cluster is moving slots (TRYAGAIN)';
  return undefined;
}

/** Why the last connection attempt failed, in words, from the socket error ioredis reported. */
const SOCKET: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connecting timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
};

/**
 * Why `error` says Redis could not be reached, or `undefined` for any other error (a Redis error
 * answer such as READONLY, a bug). `timeoutMs` is the bound the connection was made with;
 * `lastError`, the last connection error the client reported, names a refused connection.
 */
export function unreachableReason(
  error: unknown,
  timeoutMs: number | undefined,
  lastError?: Error,
): string | undefined {
  const socket = SOCKET[String((lastError as { code?: unknown } | undefined)?.code)];
  if (error instanceof Unreachable) {
    // The readiness wait ran out while ioredis kept trying: say what its last attempt met.
    // A cluster that cannot be used queues the commands until its slots are known: say why.
    const cluster = clusterReason(lastError);
    if (cluster) return `${error.message}; ${cluster}`;
    return socket && error.message.startsWith('not connected')
      ? `${error.message}; ${socket}`
      : error.message;
  }
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  const cluster = clusterReason(error);
  const down = socket ?? cluster ?? clusterReason(lastError) ?? 'the connection is down';
  if (cluster !== undefined) return down;
  if (name === 'MaxRetriesPerRequestError') return down;
  if (typeof message !== 'string' || !LOST.test(message)) return undefined;
  return message.startsWith('Command timed out') ? `no answer within ${timeoutMs} ms` : down;
}
