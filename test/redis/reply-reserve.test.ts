// Replies first (issue 52) in the shared rate limiter: bulk sends with `replyReserve`, from two
// processes (each client with a coordination, so a connection, of its own) of one api key, leave that
// share of each window free and keep one pace between them, counted in Redis; a reply from either
// process, made while the campaign runs at its quota, goes out at once. Against the fake server on
// loopback, which enforces the same quota and counts 429s.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { until } from '../helpers/campaign.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

const QUOTA = { max: 10, windowMs: 1000 };
/** ceil(0.2 * 10): the slots a campaign with replyReserve 0.2 leaves to the others. */
const RESERVED = 2;

/** When the server received each text starting with `prefix`, in order. */
const arrivals = (mock: MockServer, prefix: string): number[] =>
  mock.requests
    .filter((r) => r.path.endsWith('/webhook/broadcast-message'))
    .filter((r) => String((r.body as { msg: string }).msg).startsWith(prefix))
    .map((r) => r.at);

/** The most arrivals in any span of `windowMs`. */
const mostInAWindow = (at: readonly number[], windowMs: number): number =>
  Math.max(0, ...at.map((t, i) => at.filter((u, j) => j >= i && u - t < windowMs).length));

describe.skipIf(!REDIS_SERVER)('replyReserve in the shared rate limiter', () => {
  const shared = useRedisServer();
  const closing: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
  });

  /** A client in a "process" of its own: its own coordination (connection) on the shared Redis. */
  const clientOf = (mock: MockServer) => {
    const coordination = createRedisCoordination({ url: shared.server.url });
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
      rateLimit: { general: QUOTA },
    });
    closing.push(coordination, client);
    return client;
  };

  it('a campaign of two processes leaves its reserve: replies of either go within a quarter window, no 429', async () => {
    const mock = await createMockServer({ rateLimit: { general: QUOTA } });
    closing.push(mock);
    const [a, b] = [clientOf(mock), clientOf(mock)];
    // Both connected and logged in (one shared token) before the campaign.
    await a.generateToken();
    await b.sendText({ user_id: 'u1', msg: 'warm' });
    await new Promise((resolve) => setTimeout(resolve, QUOTA.windowMs + 100));
    const sends = [a, b].flatMap((client, c) =>
      Array.from({ length: 15 }, (_, i) =>
        client.sendText({ user_id: 'u1', msg: `campaign ${c}-${i}` }, { bulk: true, replyReserve: 0.2 }),
      ),
    );
    await until(() => arrivals(mock, 'campaign').length >= 1);
    for (let i = 0; i < 4; i++) {
      await new Promise((resolve) => setTimeout(resolve, 600));
      const begun = Date.now();
      // From the campaign's processes, in turn.
      await (i % 2 === 0 ? a : b).sendText({ user_id: 'u1', msg: `reply ${i}` });
      // Sent and answered well within the window the campaign was using.
      expect(Date.now() - begun).toBeLessThan(QUOTA.windowMs / 4);
      expect(arrivals(mock, 'campaign').length).toBeLessThan(30);
    }
    expect(await Promise.all(sends)).toEqual(Array(30).fill('success'));
    expect(mock.requests.filter((r) => r.status === 429)).toEqual([]);
    const campaign = arrivals(mock, 'campaign');
    // Both processes kept to the one share: never more than max - reserved in any span of a window...
    expect(mostInAWindow(campaign, QUOTA.windowMs)).toBeLessThanOrEqual(QUOTA.max - RESERVED);
    // ...and to the one pace: the first window's sends spread over most of it, not a burst.
    expect((campaign[QUOTA.max - RESERVED - 1] ?? 0) - (campaign[0] ?? 0)).toBeGreaterThanOrEqual(
      QUOTA.windowMs / 2,
    );
  });

  it('without replyReserve a bulk campaign still takes the free slots at once', async () => {
    const mock = await createMockServer({ rateLimit: { general: QUOTA } });
    closing.push(mock);
    const client = clientOf(mock);
    await client.generateToken();
    const sends = Array.from({ length: QUOTA.max - 1 }, (_, i) =>
      client.sendText({ user_id: 'u1', msg: `campaign ${i}` }, { bulk: true }),
    );
    await Promise.all(sends);
    const at = arrivals(mock, 'campaign');
    expect((at.at(-1) ?? 0) - (at[0] ?? 0)).toBeLessThan(QUOTA.windowMs / 2);
  });
});
