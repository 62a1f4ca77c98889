// createAccounts against a loopback server of several accounts behind one base URL: routing by key
// at login and by token after, one client per account, its credentials read once, unknown accounts.
import { afterEach, describe, expect, it } from 'vitest';
import {
  type CreateAccountsOptions,
  createAccounts,
  type OAAccounts,
  OAConfigError,
  type OACredentials,
  OAError,
} from '../../src/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { type AccountsServer, type ServedAccount, startAccountsServer } from './accounts-server.js';

const SERVED: ServedAccount[] = ['shop-1', 'shop-2', 'shop-3'].map((username, i) => ({
  username,
  apiKey: `key-${i + 1}`,
  apiSecret: `secret-${i + 1}-abcdef`,
}));

let server: AccountsServer | undefined;
let accounts: OAAccounts | undefined;
afterEach(async () => {
  await accounts?.close();
  await server?.close();
  accounts = undefined;
  server = undefined;
});

/** The platform's store of connected accounts, and what it was asked. */
function store(entries: ServedAccount[] = SERVED) {
  const db = new Map<string, OACredentials>(
    entries.map((a) => [a.username, { apiKey: a.apiKey, apiSecret: a.apiSecret }]),
  );
  const asked: string[] = [];
  const credentials = async (account: string) => {
    asked.push(account);
    await new Promise((resolve) => setTimeout(resolve, 5));
    return db.get(account);
  };
  return { db, asked, credentials };
}

async function start(options: Partial<CreateAccountsOptions> = {}, served = SERVED) {
  server = await startAccountsServer(served);
  const db = store(served);
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
      const record = server.accounts.get(username);
      expect(record?.logins).toBe(1);
      expect(record?.sends.map((s) => s.msg).sort()).toEqual([`${username} 1`, `${username} 2`]);
      expect(new Set(record?.sends.map((s) => s.token))).toEqual(new Set(record?.tokens));
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
    expect(server.accounts.get('shop-2')?.logins).toBe(1);
    expect(server.accounts.get('shop-2')?.sends).toHaveLength(50);
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
    server.hold();
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
    server.release();
    expect((await settleWithin(inFlight, 5000, 'the send in flight')).ok).toBe(true);
    await fresh.sendText({ user_id: 'u', msg: 'after' });
    expect(server.accounts.get('shop-1')?.logins).toBe(1);
    expect(server.accounts.get('shop-1')?.sends.map((s) => s.msg)).toEqual(['first', 'in flight', 'after']);
    // Its token pair was still fresh in the shared store: no login, no second question.
    expect(db.asked.filter((a) => a === 'shop-1')).toHaveLength(1);
  });

  it('the accounts share one connection pool: 20 accounts sending in turn use one socket', async () => {
    const served = Array.from({ length: 20 }, (_, i) => ({
      username: `oa-${i}`,
      apiKey: `key-${i}`,
      apiSecret: `secret-${i}-abcdef`,
    }));
    const { server, accounts } = await start({}, served);
    for (const { username } of served) await accounts.client(username).sendText({ user_id: 'u', msg: 'hi' });
    expect(server.connections()).toBe(1);
    await Promise.all(
      served.map((a) => accounts.client(a.username).sendText({ user_id: 'u', msg: 'again' })),
    );
    // At once: at most one socket per request in flight, in one pool, never one pool per client.
    expect(server.connections()).toBeLessThanOrEqual(1 + served.length);
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
    expect(server.connections()).toBe(0);
  });

  it("a resolver that throws: an OAError whose cause is the resolver's error, nothing sent", async () => {
    server = await startAccountsServer(SERVED);
    const down = new Error('database unreachable');
    accounts = createAccounts({
      credentials: () => Promise.reject(down),
      clientOptions: { baseUrl: server.url },
    });
    const error = await rejectsWithin(accounts.client('shop-1').sendText({ user_id: 'u', msg: 'hi' }), 5000);
    expect(error).toBeInstanceOf(OAError);
    expect((error as Error).cause).toBe(down);
    expect(server.connections()).toBe(0);
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
