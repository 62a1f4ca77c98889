import { expect } from 'vitest';

/** How a call ended, and after how long. */
export type Settled<T> = { ok: true; value: T; ms: number } | { ok: false; error: unknown; ms: number };

/**
 * Waits for `promise` at most `ms`. A call that is still pending then fails the test with `what` in
 * the message, instead of hanging it: the point of these tests is that every call settles.
 */
export async function settleWithin<T>(
  promise: Promise<T>,
  ms: number,
  what = 'the call',
): Promise<Settled<T>> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const pending = Symbol('pending');
  const outcome = await Promise.race([
    promise.then(
      (value): Settled<T> => ({ ok: true, value, ms: performance.now() - started }),
      (error: unknown): Settled<T> => ({ ok: false, error, ms: performance.now() - started }),
    ),
    new Promise<typeof pending>((resolve) => {
      timer = setTimeout(() => resolve(pending), ms);
    }),
  ]);
  clearTimeout(timer);
  if (outcome === pending) expect.fail(`${what} had not settled after ${ms} ms`);
  return outcome;
}

/** The error a call rejected with, failing the test when it resolved or did not settle within `ms`. */
export async function rejectsWithin(
  promise: Promise<unknown>,
  ms: number,
  what = 'the call',
): Promise<unknown> {
  const outcome = await settleWithin(promise, ms, what);
  if (outcome.ok) expect.fail(`${what} resolved (${JSON.stringify(outcome.value)}) but should have rejected`);
  return outcome.error;
}
