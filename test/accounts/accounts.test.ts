// createAccounts against the fake OA server serving several accounts behind one base URL (routing by
// key at login and by token after): one client per account, its credentials read once, unknown accounts.
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CreateAccountsOptions,
  createAccounts,
  type OAAccounts,
  OAConfigError,
  OAError,
} from '../../src/index.js';
import { createMockServer, type FakeAccountOptions, type MockServer } from '../../src/testing/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { accountStore, logins, servedAccounts, texts, tokenAccount } from './support.js';

const SERVED = servedAccounts(3);

let server: MockServer | undefined;
let accounts: OAAccounts | undefined;
afterEach(async () => {
  await accounts?.close();
  await server?.close();
  accounts = undefined;
  server = undefined;
});

async function start(options: Partial<CreateAccountsOptions> = {}, served: FakeAccountOptions[] = SERVED) {
  server = await createMockServer({ accounts: served });
  const db = accountStore(served, 5);
  accounts = createAccounts({
    credentials: db.credentials,
    clientOptions: { baseUrl: server.url },
    ...options,
  });
  return { server, accounts, db };
}

describe('one client per account', () => {
  it("each account's sends carry its own token and land in its own account", async () => {
    const { server, accounts } = await start();
    await Promise.all(
      SERVED.flatMap((a) =>
        [1, 2].map((n) =>
          accounts.client(a.username).sendText({ user_id: `u-${n}`, msg: `${a.username} ${n}` }),
        ),
      ),
    );
    for (const { username } of SERVED) {
      expect(logins(server, username)).toBe(1);
      expect(texts(server, username).sort()).toEqual([`${username} 1`, `${username} 2`]);
      const sends = server.account(username).requests.filter((r) => r.path.endsWith('/broadcast-message'));
      expect(sends.map((r) => tokenAccount(r.headers.authorization))).toEqual([username, username]);
    }
  });

  it('50 concurrent first calls ask the resolver once and log in once', async () => {
    const { server, accounts, db } = await start();
    const sends = Array.from({ length: 50 }, (_, n) =>
      accounts.client('shop-2').sendText({ user_id: `u-${n}`, msg: `hello ${n}` }),
    );
    const outcome = await settleWithin(Promise.all(sends), 10_000, 'the 50 sends');
    expect(outcome.ok).toBe(true);
    expect(db.asked).toEqual(['shop-2']);
    expect(logins(server, 'shop-2')).toBe(1);
    expect(texts(server, 'shop-2')).toHaveLength(50);
  });

  it('the same client while it is kept; forEvent is the client of event.username, or of accountOf', async () => {
    const { accounts } = await start();
    const client = accounts.client('shop-1');
    expect(accounts.client('shop-1')).toBe(client);
    expect(accounts.forEvent({ username: 'shop-1' } as never)).toBe(client);
    expect(() => accounts.forEvent({} as never)).toThrow(OAConfigError);
    const mapped = createAccounts<{ oa: string }>({
      credentials: () => undefined,
      clientOptions: { baseUrl: 'https://oa.example.com' },
      accountOf: (event) => `tenant-${event.oa}`,
    });
    expect(mapped.forEvent({ oa: 'x' })).toBe(mapped.client('tenant-x'));
    await mapped.close();
  });

  it('beyond maxClients the least recently used is dropped; its call in flight finishes; its pair is reused', async () => {
    const { server, accounts, db } = await start({ maxClients: 2 });
    const one = accounts.client('shop-1');
    await one.sendText({ user_id: 'u', msg: 'first' });
    // Its next send is answered only after the client was dropped.
    server.account('shop-1').injectFault({ kind: 'delay', delayMs: 300 }, { path: '/broadcast-message' });
    const inFlight = one.sendText({ user_id: 'u', msg: 'in flight' });
    accounts.client('shop-2');
    accounts.client('shop-1'); // used again: shop-2 is now the least recently used
    accounts.client('shop-3');
    expect(accounts.size).toBe(2);
    expect(accounts.client('shop-1')).toBe(one);
    accounts.client('shop-2');
    accounts.client('shop-3'); // shop-1 is now the least recently used: dropped, with a send in flight
    const fresh = accounts.client('shop-1');
    expect(fresh).not.toBe(one);
    expect((await settleWithin(inFlight, 5000, 'the send in flight')).ok).toBe(true);
    await fresh.sendText({ user_id: 'u', msg: 'after' });
    expect(logins(server, 'shop-1')).toBe(1);
    expect(texts(server, 'shop-1')).toEqual(['first', 'in flight', 'after']);
    // Its token pair was still fresh in the shared store: no login, no second question.
    expect(db.asked.filter((a) => a === 'shop-1')).toHaveLength(1);
  });

  it('the accounts share one connection pool: 20 accounts sending in turn use one socket', async () => {
    const served = servedAccounts(20, 'oa');
    const { server, accounts } = await start({}, served);
    for (const { username } of served) await accounts.client(username).sendText({ user_id: 'u', msg: 'hi' });
    expect(server.connections.accepted).toBe(1);
    await Promise.all(
      served.map((a) => accounts.client(a.username).sendText({ user_id: 'u', msg: 'again' })),
    );
    // At once: at most one socket per request in flight, in one pool, never one pool per client.
    expect(server.connections.accepted).toBeLessThanOrEqual(1 + served.length);
  });
});

describe('unknown and broken accounts', () => {
  it('an unknown account: OAConfigError naming it, nothing sent, every call', async () => {
    const { server, accounts } = await start();
    const client = accounts.client('shop-404');
    for (let i = 0; i < 2; i++) {
      const error = await rejectsWithin(client.sendText({ user_id: 'u', msg: 'hi' }), 5000);
      expect(error).toBeInstanceOf(OAConfigError);
      expect((error as Error).message).toContain('shop-404');
    }
    await expect(client.generateToken()).rejects.toBeInstanceOf(OAConfigError);
    expect(server.connections.accepted).toBe(0);
    expect(server.accounts.flatMap((a) => a.requests)).toEqual([]);
  });

  it("a resolver that throws: an OAError whose cause is the resolver's error, nothing sent", async () => {
    server = await createMockServer({ accounts: SERVED });
    const down = new Error('database unreachable');
    accounts = createAccounts({
      credentials: () => Promise.reject(down),
      clientOptions: { baseUrl: server.url },
    });
    const error = await rejectsWithin(accounts.client('shop-1').sendText({ user_id: 'u', msg: 'hi' }), 5000);
    expect(error).toBeInstanceOf(OAError);
    expect((error as Error).cause).toBe(down);
    expect(server.connections.accepted).toBe(0);
  });

  it('refuses options naming one account, and a bad maxClients', () => {
    const credentials = () => undefined;
    expect(() => createAccounts({ credentials, clientOptions: { apiKey: 'k' } as never })).toThrow(
      OAConfigError,
    );
    expect(() => createAccounts({ credentials, maxClients: 0 })).toThrow(OAConfigError);
    expect(() => createAccounts({} as never)).toThrow(OAConfigError);
  });
});
