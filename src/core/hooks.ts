/**
 * The one seam around a call, public and typed: hooks the client runs around each call and each
 * attempt, each given one state object (ky's hooks, grammY's `ApiClient.use`). The client's own tracing
 * is installed here first, then the client's `hooks`, then a call's own `hooks`; the outbox's
 * at-most-once record is a call's `beforeSend` and `notDelivered`. Every wait on a hook is bounded by
 * the call's {@link CallControl} (deadline, signal, `close()`).
 */
import { isOAError, OAApiError, OAConnectionError, type OAError } from '../errors.js';
import type {
  OAAroundCallHook,
  OAAttemptState,
  OABeforeSendHook,
  OACallState,
  OAHooks,
  OANotDeliveredHook,
  OANotDeliveredState,
} from '../schemas/hooks.js';
import { type CallControl, isThenable } from './call-control.js';
import type { Logger } from './logger.js';

/** The hooks a call runs, joined: each list absent when empty, so that a call without hooks pays nothing. */
export interface CallHooks {
  readonly aroundCall?: readonly OAAroundCallHook[];
  readonly beforeSend?: readonly OABeforeSendHook[];
  readonly notDelivered?: readonly OANotDeliveredHook[];
}

/** What the per-attempt hooks read of the call (`Call` in `retry.ts`). */
interface HookedCall {
  readonly ctx: { readonly logger: Logger };
  readonly control: CallControl;
  readonly hooks: CallHooks | undefined;
  readonly state: OACallState;
  readonly attempt: number;
}

/**
 * `first`'s hooks, then `then`'s, in order (copied, so that a later change to a caller's array changes
 * nothing); `undefined` when there are none at all. Without `then`, `first` as it is: no allocation.
 */
export function joinHooks(first: CallHooks | undefined, then: OAHooks | undefined): CallHooks | undefined {
  if (!then) return first;
  const joined: Record<string, unknown[]> = {};
  let any = false;
  for (const name of ['aroundCall', 'beforeSend', 'notDelivered'] as const) {
    const list = [...(first?.[name] ?? []), ...(then[name] ?? [])];
    if (list.length > 0) {
      joined[name] = list;
      any = true;
    }
  }
  return any ? joined : undefined;
}

/** What the hooks of one call are told of it. */
export function callState(
  endpoint: { name: string; path: string; auth: boolean },
  params: unknown,
  renewal: boolean,
): OACallState {
  // The token endpoints' params are the api secret or a refresh token.
  return {
    endpoint: endpoint.name,
    method: 'POST',
    path: endpoint.path,
    params: endpoint.auth ? params : undefined,
    renewal,
  };
}

/**
 * Runs `call` inside the `aroundCall` hooks, the first outermost. The call settles as `call` did: a
 * hook's own value is ignored, and its failure after `next()` is only logged; `next()` runs `call` once.
 */
export function runAround<T>(
  hooks: readonly OAAroundCallHook[],
  state: OACallState,
  logger: Logger,
  call: () => Promise<T>,
): Promise<T> {
  const step = async (index: number): Promise<T> => {
    const hook = hooks[index];
    if (!hook) return call();
    let inner: Promise<T> | undefined;
    try {
      // Called at once, in the caller's async context: what the hook runs next() in, the call runs in.
      await hook(state, () => {
        if (inner) return Promise.reject(hookFailed('aroundCall', new Error('next() called twice'), state));
        inner = step(index + 1);
        return inner;
      });
    } catch (error) {
      if (!inner) throw hookFailed('aroundCall', error, state);
      warn(logger, 'aroundCall', error);
    }
    if (!inner) throw hookFailed('aroundCall', new Error('next() not called'), state);
    return inner;
  };
  return step(0);
}

/**
 * The `beforeSend` hooks of an attempt, in order, each bounded like every other wait of the call; if
 * one fails, the request does not leave.
 */
export async function runBeforeSend(call: HookedCall): Promise<void> {
  const { control, state } = call;
  const doing = 'running its beforeSend hook';
  const told: OAAttemptState = { ...state, attempt: call.attempt };
  for (const hook of call.hooks?.beforeSend ?? []) {
    if (control.stopped) throw control.error(doing);
    let done: unknown;
    try {
      done = hook(told);
    } catch (error) {
      throw hookFailed('beforeSend', error, state);
    }
    if (!isThenable(done)) continue;
    try {
      await control.wait(Promise.resolve(done), doing);
    } catch (error) {
      if (control.stopped) throw error;
      throw hookFailed('beforeSend', error, state);
    }
  }
}

/**
 * Whether an attempt that failed with `error` certainly did not deliver: nothing left the client, or
 * the API answered that it did not act (429, `JOB_BUSY`, 401, any other 4xx verdict). A 5xx, a reset
 * or a timeout after the request left, an abort in flight or a bad 2xx answer may have delivered.
 */
function certainlyNotDelivered(error: unknown): error is OAError {
  if (!isOAError(error)) return false;
  const kind = error.retryClass;
  if (kind === 'not_sent' || kind === 'rejected' || kind === 'unauthorized') return true;
  return kind === 'final' && error instanceof OAApiError && error.status >= 400 && error.status < 500;
}

/**
 * Runs the `notDelivered` hooks when `error` says the attempt certainly did not deliver, before the
 * call waits to try again or rejects; bounded like `beforeSend`. A hook's failure only leaves its
 * record in place (the safe side): it is logged, and the call goes on with its own error.
 */
export async function tellNotDelivered(call: HookedCall, error: unknown): Promise<void> {
  if (!certainlyNotDelivered(error)) return;
  const told: OANotDeliveredState = { ...call.state, attempt: call.attempt, error };
  for (const hook of call.hooks?.notDelivered ?? []) {
    try {
      const done = hook(told);
      if (isThenable(done)) await call.control.wait(Promise.resolve(done), 'running its notDelivered hook');
    } catch (failure) {
      warn(call.ctx.logger, 'notDelivered', failure);
    }
  }
}

/** A hook's failure that changes nothing of the call: told to the logger. */
function warn(logger: Logger, hook: string, error: unknown): void {
  logger.warn?.(`oa-messaging: its ${hook} hook failed: ${reasonOf(error)}`);
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A fresh not-sent error for a hook's failure: whatever the hook threw, nothing left. */
function hookFailed(hook: string, error: unknown, state: OACallState): OAError {
  return new OAConnectionError(`POST ${state.path} not sent: its ${hook} hook failed: ${reasonOf(error)}`, {
    cause: error,
    failure: 'not_sent',
  });
}
