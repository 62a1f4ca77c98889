/**
 * Keeping a lease alive while its holder works, as job queues keep theirs (BullMQ's job locks, SQS's
 * visibility timeout): the token renewal lock of `oa-messaging/redis`, a webhook delivery's claim.
 */

/**
 * Calls `extend` every `everyMs` until the returned function is called. Each call is scheduled after
 * the previous one answered, not on an interval, so that the calls to a slow store never pile up.
 * `extend` answering `false` (the lease is no longer the holder's) stops it and calls `onLost`; any
 * other answer (`true`, or `undefined` for a failure it handled) keeps it going. The timer never keeps
 * the process alive: the work the lease guards does.
 */
export function keepLease(
  extend: () => Promise<boolean | undefined>,
  everyMs: number,
  onLost: () => void,
): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = async () => {
    const kept = await extend().catch(() => undefined);
    if (stopped) return;
    if (kept === false) return onLost();
    schedule();
  };
  const schedule = () => {
    timer = setTimeout(() => void tick(), Math.max(1, Math.floor(everyMs)));
    // Edge runtimes give a number; Node a Timeout to unref.
    if (typeof timer === 'object') timer.unref?.();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
