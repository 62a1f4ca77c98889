/**
 * The producer calls (`inbox.store`, `outbox.add`, `addMany`, `get`, `counts`) give up on a Redis that
 * cannot be reached instead of waiting for it to come back (their connection is bounded: see
 * `../redis/reach.js`), and say so.
 */
import { isOAError, OAConnectionError } from '../errors.js';

/**
 * Makes the `names` calls of `target` (in place; each a function that works unbound, as before) reject
 * with an `OAConnectionError` when Redis could not be reached, as `unreachable` tells from the error.
 * Any other error passes as it is (an `OAValidationError` of bad input, a Redis error answer). The
 * message names the call and the reason, never the URL (it may hold a password).
 */
export function rejectUnreachable<T extends object>(
  target: T,
  what: string,
  names: readonly (keyof T & string)[],
  unreachable: (error: unknown) => string | undefined,
): T {
  const calls = target as Record<string, unknown>;
  for (const name of names) {
    const call = calls[name] as (...args: unknown[]) => Promise<unknown>;
    calls[name] = (...args: unknown[]) =>
      call.apply(target, args).catch((error: unknown) => {
        const reason = isOAError(error) ? undefined : unreachable(error);
        if (reason === undefined) throw error;
        throw new OAConnectionError(`${what}.${name}: Redis could not be reached (${reason})`, {
          cause: error,
        });
      });
  }
  return target;
}
