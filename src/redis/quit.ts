/** Closing an ioredis connection without waiting on a Redis that is gone. */

/** How long a ready connection's QUIT may take before the connection is dropped. */
const QUIT_MS = 1000;

/** What closing needs of an ioredis client. */
export interface Quittable {
  /** `ready` once connected; `connecting`, `reconnecting`... while Redis cannot be reached. */
  readonly status?: unknown;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/**
 * Quits a ready connection (the answers to what was sent before still arrive), within 1 s; any other
 * is dropped at once (`drop`, by default `disconnect()`). A QUIT waits behind every command queued for
 * a reconnection (forever on a connection made for BullMQ, `maxRetriesPerRequest: null`), and one on a
 * connection that lost Redis without noticing yet waits for a reconnection: a shutdown would stall.
 */
export async function quitOrDrop(
  client: Quittable,
  drop: () => void = () => client.disconnect(),
): Promise<void> {
  if (client.status !== 'ready') return drop();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), QUIT_MS);
  });
  try {
    if ((await Promise.race([client.quit(), late])) === 'late') drop();
  } catch {
    drop();
  } finally {
    clearTimeout(timer);
  }
}
