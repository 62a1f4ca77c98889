// Replies first (issue 52) in the outbox: an account's campaign (`bulk: true` jobs) at its quota leaves
// `replyReserve` of each window to the account's other sends, so its reply goes out at once instead of
// after the campaign's window; `replyReserve: 0` is the outbox's earlier behaviour; a bad value is an
// OAConfigError. Against a real redis-server and the fake OA server enforcing the account's quota.
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAConfigError } from '../../src/index.js';
import { createOutbox, type Outbox } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { accountStore, servedAccounts, texts, tooManyRequests } from '../accounts/support.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

/** 10 sends per 4 s: a campaign's window is long enough that a reply behind it would wait seconds. */
const QUOTA = { max: 10, windowMs: 4000 };

async function until(done: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

describe.skipIf(!REDIS_SERVER)('outbox replyReserve', () => {
  const shared = useRedisServer();
  let outbox: Outbox | undefined;
  let accounts: OAAccounts | undefined;
  let mock: MockServer | undefined;

  afterEach(async () => {
    await outbox?.close();
    await accounts?.close();
    await mock?.close();
    outbox = accounts = mock = undefined;
  });

  const open = async (name: string, replyReserve?: number) => {
    const served = servedAccounts(1);
    mock = await createMockServer({ accounts: served, rateLimit: { general: QUOTA } });
    accounts = createAccounts({
      credentials: accountStore(served).credentials,
      clientOptions: {
        baseUrl: mock.url,
        maxRetries: 0,
        rateLimit: { general: QUOTA, upload: { max: 1, windowMs: QUOTA.windowMs } },
      },
    });
    outbox = createOutbox({
      connection: { url: shared.server.url },
      name,
      ...(replyReserve === undefined ? {} : { replyReserve }),
    });
    return { mock, accounts, outbox };
  };

  /** A campaign of 30 on shop-1, then a reply added once the campaign's window has opened: its wait, ms. */
  const replyDuringCampaign = async (name: string, replyReserve?: number) => {
    const { mock, accounts, outbox } = await open(name, replyReserve);
    await outbox.addMany(
      Array.from({ length: 30 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `c${i}` },
        key: `c${i}`,
        account: 'shop-1',
        bulk: true,
      })),
    );
    const worker = outbox.work({ accounts, concurrency: 8 });
    await until(() => texts(mock, 'shop-1').length >= 1);
    // A little into the window: today's campaign has taken all of it by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const addedAt = Date.now();
    await outbox.add('sendText', { user_id: 'u', msg: 'reply' }, { key: 'r', account: 'shop-1' });
    await until(() => texts(mock, 'shop-1').includes('reply'));
    const reply = mock.account('shop-1').deliveries.find((d) => d.items[0]?.msg === 'reply');
    const campaignLeft = 30 - texts(mock, 'shop-1').filter((t) => t.startsWith('c')).length;
    await worker.close();
    return { waitMs: (reply?.at ?? Number.POSITIVE_INFINITY) - addedAt, campaignLeft, mock };
  };

  it('by default, a reply made while its account’s campaign fills the quota goes out within a quarter window, no 429', async () => {
    const { waitMs, campaignLeft, mock } = await replyDuringCampaign('reserve-default');
    // The campaign still had sends to go: the reply did not find the account idle.
    expect(campaignLeft).toBeGreaterThan(0);
    expect(waitMs).toBeLessThan(QUOTA.windowMs / 4);
    expect(tooManyRequests(mock)).toBe(0);
  });

  it('replyReserve: 0 lets the campaign take the whole window: the reply waits for a slot to come back', async () => {
    const { waitMs, mock } = await replyDuringCampaign('reserve-none', 0);
    expect(waitMs).toBeGreaterThan(QUOTA.windowMs / 4);
    expect(tooManyRequests(mock)).toBe(0);
  });

  it.each([1, -0.1, 2, Number.NaN, '0.1', null])(
    'replyReserve %s: OAConfigError naming the option',
    (bad) => {
      const connection = { url: shared.server.url };
      expect(() => createOutbox({ connection, replyReserve: bad as number })).toThrow(OAConfigError);
      expect(() => createOutbox({ connection, replyReserve: bad as number })).toThrow(/replyReserve/);
    },
  );

  it('replyReserve from 0 to under 1 is taken', async () => {
    for (const replyReserve of [0, 0.1, 0.5, 0.99]) {
      const o = createOutbox({ connection: { url: shared.server.url }, replyReserve });
      await o.close();
    }
  });
});
