// addMany with entries built in a variable (`users.map(...)`), where TypeScript widens `method` to
// string: they type-check without `as const`, are checked at run time, stored and sent. Entries
// written inline keep their compile-time checks (npm run typecheck compiles this file: a
// `@ts-expect-error` that no longer meets an error fails it).
import { afterEach, describe, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAValidationError } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxCounts } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { accountStore, servedAccounts } from '../accounts/support.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

const EMPTY: OutboxCounts = { waiting: 0, delayed: 0, active: 0, delivered: 0, failed: 0, unknown: 0 };

/** What the type checker must refuse or take; never run, only compiled. */
export function entryTypes(outbox: Outbox, users: string[]) {
  // Built in a variable: `method` is a string here, and the entries are taken as they are.
  const entries = users.map((u) => ({
    method: 'sendText',
    params: { user_id: u, msg: 'hi' },
    key: `k-${u}`,
    account: 'shop-1',
  }));
  void outbox.addMany(entries);
  const one = {
    method: 'sendImage',
    params: { user_id: 'u', image_url: 'https://example.com/a.png' },
    key: 'i',
  };
  void outbox.addMany([one, ...entries]);

  // Inline, the method and its params are known: a wrong name or wrong params does not compile.
  // @ts-expect-error: no such method
  void outbox.addMany([{ method: 'sendTxt', params: { user_id: 'u', msg: 'hi' }, key: 'a' }]);
  // @ts-expect-error: sendText's params have no image_url
  void outbox.addMany([{ method: 'sendText', params: { user_id: 'u', image_url: 'x' }, key: 'b' }]);
  // @ts-expect-error: sendText needs msg
  void outbox.addMany([{ method: 'sendText', params: { user_id: 'u' }, key: 'c' }]);
  // @ts-expect-error: an entry needs a key
  void outbox.addMany([{ method: 'sendText', params: { user_id: 'u', msg: 'hi' } }]);
  // In a variable, what TypeScript still knows is checked: params that fit no method, a missing key.
  const noParams = users.map((u) => ({ method: 'sendText', params: { name: u }, key: u }));
  // @ts-expect-error: params of no send method
  void outbox.addMany(noParams);
  const noKey = users.map((u) => ({ method: 'sendText', params: { user_id: u, msg: 'hi' } }));
  // @ts-expect-error: no key
  void outbox.addMany(noKey);
}

describe.skipIf(!REDIS_SERVER)('addMany with entries built in a variable', () => {
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

  it('stores and sends them; a method that is not one is refused, nothing stored', async () => {
    const served = servedAccounts(1);
    mock = await createMockServer({ accounts: served, rateLimit: false });
    accounts = createAccounts({
      credentials: accountStore(served).credentials,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'entries' });

    const users = ['u1', 'u2', 'u3'];
    const misspelt = users.map((u) => ({
      method: 'sendTxt',
      params: { user_id: u, msg: 'hi' },
      key: `k-${u}`,
    }));
    const refused = await outbox.addMany(misspelt).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OAValidationError);
    expect((refused as OAValidationError).issues[0]?.path).toEqual([0, 'method']);
    expect(await outbox.counts({ account: 'shop-1' })).toEqual(EMPTY);
    expect(await outbox.counts()).toEqual(EMPTY);

    const entries = users.map((u) => ({
      method: 'sendText',
      params: { user_id: u, msg: `hi ${u}` },
      key: `k-${u}`,
      account: 'shop-1',
    }));
    expect(await outbox.addMany(entries)).toMatchObject({ added: 3 });
    const worker = outbox.work({ accounts });
    const states = await outbox.waitFor('all', { account: 'shop-1', timeoutMs: 10_000 });
    await worker.close();
    expect([...states.values()].map((s) => s.state)).toEqual(['delivered', 'delivered', 'delivered']);
    const sent = mock.account('shop-1').deliveries.map((d) => [d.user_ids, d.items[0]?.msg]);
    expect(sent.sort()).toEqual([
      [['u1'], 'hi u1'],
      [['u2'], 'hi u2'],
      [['u3'], 'hi u3'],
    ]);
  });
});
