/**
 * The two per-attempt hooks of a durable queue around a request (`BEFORE_SEND`, `NOT_DELIVERED`): the
 * first runs just before the request leaves, the second when it certainly did not deliver.
 */
import { OAConnectionError, type OAError } from '../errors.js';
import type { CallControl } from './call-control.js';
import { certainlyNotDelivered } from './failure.js';
import type { Logger } from './logger.js';

/**
 * The caller's last word before the request leaves, bounded like every other wait of the call; if it
 * fails, the request does not leave.
 */
export async function runBeforeSend(control: CallControl, hook: () => unknown, endpoint: { path: string }) {
  const doing = 'running its beforeSend hook';
  if (control.stopped) throw control.error(doing);
  let done: unknown;
  try {
    done = hook();
  } catch (error) {
    throw hookFailed(error, endpoint);
  }
  if (!(done instanceof Promise)) return;
  try {
    await control.wait(done, doing);
  } catch (error) {
    if (control.stopped) throw error;
    throw hookFailed(error, endpoint);
  }
}

/**
 * Runs the caller's `notDelivered` hook when `error` says the attempt certainly did not deliver, before
 * the call waits to try again or rejects; bounded like `runBeforeSend`. Its failure only leaves the
 * caller's record in place (the safe side), so the call goes on with its own error.
 */
export async function tellNotDelivered(logger: Logger, control: CallControl | undefined, error: unknown) {
  const hook = control?.notDelivered;
  if (!hook || !certainlyNotDelivered(error)) return;
  try {
    const done = hook();
    if (done instanceof Promise) await control.wait(done, 'running its notDelivered hook');
  } catch (failure) {
    logger.warn?.(
      `oa-messaging: a notDelivered hook failed (${failure instanceof Error ? failure.message : String(failure)})`,
    );
  }
}

/** A fresh not-sent error for a hook's failure: whatever the hook threw, nothing left. */
function hookFailed(error: unknown, endpoint: { path: string }): OAError {
  const reason = error instanceof Error ? error.message : String(error);
  return new OAConnectionError(`POST ${endpoint.path} not sent: its beforeSend hook failed: ${reason}`, {
    cause: error,
    failure: 'not_sent',
  });
}
