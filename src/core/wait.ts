/** Waits that a caller's `AbortSignal` can cut short. */
import { OAAbortError } from '../errors.js';

/** The error of a wait that a signal ended: `Aborted while <what>`, with the signal's reason as cause. */
export function abortError(signal: AbortSignal, what: string): OAAbortError {
  return new OAAbortError(`Aborted while ${what}`, { cause: signal.reason });
}

/**
 * Resolves after `ms`, or earlier when `wake` is called; rejects with `OAAbortError` when `signal`
 * fires. The timer keeps the process alive: someone is waiting on it.
 */
export function sleep(
  ms: number,
  signal: AbortSignal | undefined,
  what: string,
): { done: Promise<void>; wake: () => void } {
  let wake = () => {};
  const done = new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal, what));
      return;
    }
    const finish = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      finish();
      reject(abortError(signal as AbortSignal, what));
    };
    const timer = setTimeout(() => {
      finish();
      resolve();
    }, ms);
    wake = () => {
      finish();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return { done, wake: () => wake() };
}
