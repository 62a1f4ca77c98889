// One outbox for every account while the platform's credentials store is out (it throws, or hangs):
// the affected account's jobs wait and are all delivered once after it recovers (none failed, none
// unknown), the other accounts are untouched, and the outbox guide's shutdown returns within seconds.
// Against a real redis-server and the fake OA server serving two accounts.
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAClient, type OACredentials } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { servedAccounts, texts } from '../accounts/support.js';
import { settleWithin } from '../helpers/bounded.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

const SERVED = servedAccounts(2);

describe.skipIf(!REDIS_SERVER)('outbox jobs while the credentials store is out', () => {
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

  /** The store: shop-1's lookups fail (`mode`) until `recover()`; shop-2's always answer. */
  async function open(mode: 'throws' | 'hangs') {
    mock = await createMockServer({ accounts: SERVED, rateLimit: false });
    let out = true;
    const db = new Map<string, OACredentials>(
      SERVED.map((a) => [a.username, { apiKey: a.apiKey, apiSecret: a.apiSecret }]),
    );
    accounts = createAccounts({
      credentials: (account) => {
        if (account === 'shop-1' && out) {
          if (mode === 'throws') throw new Error('accounts-db: connection refused');
          return new Promise<never>(() => {});
        }
        return db.get(account);
      },
      credentialsTimeoutMs: 500,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: `creds-${mode}` });
    const entries: OutboxEntry[] = [
      ...Array.from({ length: 10 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `p${i}` },
        key: `p${i}`,
        account: 'shop-1',
      })),
      ...Array.from({ length: 2 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `o${i}` },
        key: `o${i}`,
        account: 'shop-2',
      })),
    ];
    await outbox.addMany(entries);
    return { mock, accounts, outbox, recover: () => (out = false) };
  }

  for (const mode of ['throws', 'hangs'] as const) {
    it(`a store that ${mode} for seconds: every job delivered once after it recovers, the other account untouched`, async () => {
      const { mock, accounts, outbox, recover } = await open(mode);
      const worker = outbox.work({ accounts, concurrency: 4 });
      try {
        // The other account is not held up by the outage.
        await outbox.waitFor(['o0', 'o1'], { account: 'shop-2', timeoutMs: 5000 });
        await new Promise((resolve) => setTimeout(resolve, 2500));
        const during = await outbox.counts({ account: 'shop-1' });
        expect(during.failed).toBe(0);
        expect(during.unknown).toBe(0);
        expect(during.delivered).toBe(0);
        recover();
        const keys = Array.from({ length: 10 }, (_, i) => `p${i}`);
        await outbox.waitFor(keys, { account: 'shop-1', timeoutMs: 20_000 });
        const after = await outbox.counts({ account: 'shop-1' });
        expect(after).toMatchObject({ delivered: 10, failed: 0, unknown: 0 });
        expect(texts(mock, 'shop-1').sort()).toEqual(keys.sort());
        expect(texts(mock, 'shop-2').sort()).toEqual(['o0', 'o1']);
      } finally {
        await worker.close();
      }
    }, 40_000);
  }

  it("a worker's own client whose credentials provider is out: its jobs wait too, none failed", async () => {
    mock = await createMockServer({ accounts: SERVED, rateLimit: false });
    let out = true;
    const [shop] = SERVED as [(typeof SERVED)[number]];
    const client = new OAClient({
      baseUrl: mock.url,
      account: shop.username,
      maxRetries: 0,
      credentials: () => {
        if (out) throw new Error('secrets manager: unavailable');
        return { apiKey: shop.apiKey, apiSecret: shop.apiSecret };
      },
    });
    // Two tries in all: an outage counted as tries would fail them within the outage.
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'creds-client', attempts: 2 });
    await outbox.addMany(
      Array.from({ length: 4 }, (_, i) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: `c${i}` },
        key: `c${i}`,
      })),
    );
    const worker = outbox.work({ client, concurrency: 2 });
    try {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await outbox.counts()).toMatchObject({ failed: 0, unknown: 0, delivered: 0 });
      out = false;
      await outbox.waitFor(['c0', 'c1', 'c2', 'c3'], { timeoutMs: 20_000 });
      expect(await outbox.counts()).toMatchObject({ delivered: 4, failed: 0, unknown: 0 });
    } finally {
      await worker.close();
      await client.close();
    }
  }, 40_000);

  it("the outbox guide's shutdown returns within seconds while the store hangs", async () => {
    const opened = await open('hangs');
    const worker = opened.outbox.work({ accounts: opened.accounts, concurrency: 4 });
    await opened.outbox.waitFor(['o0', 'o1'], { account: 'shop-2', timeoutMs: 5000 });
    // Jobs of shop-1 are waiting for its credentials now.
    const shutdown = (async () => {
      await worker.close();
      await opened.outbox.close();
      await opened.accounts.close();
    })();
    const outcome = await settleWithin(shutdown, 5000, 'the shutdown');
    expect(outcome.ok, String(outcome.ok ? '' : outcome.error)).toBe(true);
    outbox = undefined;
    accounts = undefined;
  }, 20_000);
});
