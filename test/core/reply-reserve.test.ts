// Replies first (issue 52) in the client's rate limiter: bulk sends with `replyReserve` leave that
// share of each window to the account's other requests and are paced over the window, so a reply made
// while the campaign runs at its quota goes out at once; without it a campaign still takes the window
// in a burst. Against the fake server on loopback, which enforces the same quota and counts 429s.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient, OAValidationError } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { until } from '../helpers/campaign.js';

const QUOTA = { max: 10, windowMs: 1000 };
/** ceil(0.2 * 10): the slots a campaign with replyReserve 0.2 leaves to the others. */
const RESERVED = 2;

const closing: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

async function limited() {
  const mock = await createMockServer({ rateLimit: { general: QUOTA } });
  const client = new OAClient({
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
    rateLimit: { general: QUOTA },
  });
  closing.push(mock, client);
  // Logged in first: the login's slot is then one of the replies' share, as a reply's would be.
  await client.generateToken();
  return { mock, client };
}

/** When the server received each text starting with `prefix`, in order. */
const arrivals = (mock: MockServer, prefix: string): number[] =>
  mock.requests
    .filter((r) => r.path.endsWith('/webhook/broadcast-message'))
    .filter((r) => String((r.body as { msg: string }).msg).startsWith(prefix))
    .map((r) => r.at);

/** The most arrivals in any span of `windowMs`. */
const mostInAWindow = (at: readonly number[], windowMs: number): number =>
  Math.max(0, ...at.map((t, i) => at.filter((u, j) => j >= i && u - t < windowMs).length));

const campaign = (client: OAClient, count: number, options: { bulk: true; replyReserve?: number }) =>
  Array.from({ length: count }, (_, i) => client.sendText({ user_id: 'u1', msg: `campaign ${i}` }, options));

describe('replyReserve in the rate limiter', () => {
  it('a campaign at its quota leaves its reserve: each reply goes out within a quarter window, no 429', async () => {
    const { mock, client } = await limited();
    const sends = campaign(client, 30, { bulk: true, replyReserve: 0.2 });
    // Replies across three windows of the campaign, the first once it has begun.
    await until(() => arrivals(mock, 'campaign').length >= 1);
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 600));
      const begun = Date.now();
      await client.sendText({ user_id: 'u1', msg: `reply ${i}` });
      // Sent and answered well within the window the campaign was using.
      expect(Date.now() - begun).toBeLessThan(QUOTA.windowMs / 4);
      // The campaign was still running: the reply did not find the quota idle.
      expect(arrivals(mock, 'campaign').length).toBeLessThan(30);
    }
    expect(await Promise.all(sends)).toEqual(Array(30).fill('success'));
    expect(mock.requests.filter((r) => r.status === 429)).toEqual([]);
    // The campaign kept to its share: never more than max - reserved in any span of a window.
    expect(mostInAWindow(arrivals(mock, 'campaign'), QUOTA.windowMs)).toBeLessThanOrEqual(
      QUOTA.max - RESERVED,
    );
  });

  it('paces a campaign over the window instead of a burst as it opens', async () => {
    const { mock, client } = await limited();
    const sends = campaign(client, QUOTA.max - RESERVED, { bulk: true, replyReserve: 0.2 });
    await Promise.all(sends);
    const at = arrivals(mock, 'campaign');
    // 8 sends, one per window / 8 (after the first two): spread over most of the window.
    expect((at.at(-1) ?? 0) - (at[0] ?? 0)).toBeGreaterThanOrEqual(QUOTA.windowMs / 2);
  });

  it('without replyReserve a bulk campaign still takes the free slots at once', async () => {
    const { mock, client } = await limited();
    await Promise.all(campaign(client, QUOTA.max - 1, { bulk: true }));
    const at = arrivals(mock, 'campaign');
    expect((at.at(-1) ?? 0) - (at[0] ?? 0)).toBeLessThan(QUOTA.windowMs / 2);
  });

  it.each([1, -0.1, 1.5, Number.NaN, '0.1'])(
    'replyReserve %s: OAValidationError, nothing sent',
    async (bad) => {
      const mock = await createMockServer();
      const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
      closing.push(mock, client);
      const error = await client
        .sendText({ user_id: 'u1', msg: 'x' }, { bulk: true, replyReserve: bad as number })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAValidationError);
      expect((error as Error).message).toMatch(/replyReserve/);
      expect(mock.requests).toEqual([]);
    },
  );
});
