/**
 * A campaign's sends racing a reply through the rate limiter, against the fake server: what the
 * `bulk` tests of the in-process limiter and of the shared one (test/core, test/redis) have in common.
 */
import type { OAClient } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';

/** The texts the server received, in the order they arrived. */
export const sentTexts = (mock: MockServer): string[] =>
  mock.requests
    .filter((r) => r.path.endsWith('/webhook/broadcast-message'))
    .map((r) => (r.body as { msg: string }).msg);

/** Resolves once `done()` holds, checked every 10 ms; throws after `ms`. */
export async function until(done: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Queues `count` texts `campaign 0`, `campaign 1`... on `client` (each `bulk` when asked), and
 * resolves with their calls once `seen` of them have reached the server.
 */
export async function startCampaign(
  mock: MockServer,
  client: OAClient,
  { count, bulk, seen = 1 }: { count: number; bulk: boolean; seen?: number },
): Promise<Promise<string>[]> {
  const sends = Array.from({ length: count }, (_, i) =>
    client.sendText({ user_id: 'u1', msg: `campaign ${i}` }, bulk ? { bulk: true } : {}),
  );
  await until(() => sentTexts(mock).filter((t) => t.startsWith('campaign')).length >= seen);
  return sends;
}
