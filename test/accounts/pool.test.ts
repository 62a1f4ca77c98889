// The accounts' shared connection pools (one per base URL, owned by createAccounts, bounded), clients
// closed beyond maxClients once their calls end, and base URLs named by the credentials resolver.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createAccounts,
  type OAAccounts,
  OAConfigError,
  OAConnectionError,
  OATimeoutError,
} from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { accountStore, logins, servedAccounts, texts } from './support.js';

const PNG = readFileSync(new URL('../fixtures/media/sample.png', import.meta.url));

const servers: MockServer[] = [];
let accounts: OAAccounts | undefined;
afterEach(async () => {
  await accounts?.close();
  accounts = undefined;
  for (const server of servers.splice(0)) await server.close();
});

async function serve(n: number, prefix = 'shop') {
  const served = servedAccounts(n, prefix);
  const server = await createMockServer({ accounts: served, rateLimit: false });
  servers.push(server);
  return { server, served, ...accountStore(served) };
}

describe('one connection pool per base URL, owned by the accounts', () => {
  it('300 accounts sending at once stay within the cap of sockets', async () => {
    const { server, served, credentials } = await serve(300);
    accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url }, maxConnections: 16 });
    const sends = served.map((a) => accounts?.client(a.username).sendText({ user_id: 'u', msg: a.username }));
    const outcome = await settleWithin(Promise.all(sends), 30_000, 'the 300 sends');
    expect(outcome.ok).toBe(true);
    expect(server.connections.accepted).toBeGreaterThan(0);
    expect(server.connections.accepted).toBeLessThanOrEqual(16);
    for (const { username } of served) expect(texts(server, username)).toEqual([username]);
  });

  it('a send that waits for a socket is bounded by its deadline and, never sent, is classed so', async () => {
    const { server, credentials } = await serve(2);
    accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url }, maxConnections: 1 });
    const [one, two] = [accounts.client('shop-1'), accounts.client('shop-2')];
    await one.sendText({ user_id: 'u', msg: 'warm' });
    await two.sendText({ user_id: 'u', msg: 'warm' });
    server.account('shop-1').injectFault({ kind: 'delay', delayMs: 800 }, { path: '/broadcast-message' });
    const slow = one.sendText({ user_id: 'u', msg: 'slow' });
    const error = await rejectsWithin(
      two.sendText({ user_id: 'u', msg: 'queued' }, { timeoutMs: 200 }),
      5000,
    );
    expect(error).toBeInstanceOf(OATimeoutError);
    expect((error as OATimeoutError).deliveryUnknown).toBe(false);
    expect((await settleWithin(slow, 5000, 'the slow send')).ok).toBe(true);
    // The socket is free again: the queued request was dropped, never written.
    await two.sendText({ user_id: 'u', msg: 'after' });
    expect(texts(server, 'shop-2')).toEqual(['warm', 'after']);
  });

  it("one client's close() leaves the pool to the others; accounts.close() closes it", async () => {
    const { server, credentials } = await serve(2);
    accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url } });
    const one = accounts.client('shop-1');
    await one.sendText({ user_id: 'u', msg: 'hi' });
    await one.close();
    await accounts.client('shop-2').sendText({ user_id: 'u', msg: 'hi' });
    // No socket of the pool was closed by the client's close().
    expect(server.connections.open).toBe(server.connections.accepted);
    expect(texts(server, 'shop-2')).toEqual(['hi']);
    await accounts.close();
    const closed = Date.now();
    while (server.connections.open > 0 && Date.now() - closed < 2000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(server.connections.open).toBe(0);
  });
});

describe('clients beyond maxClients', () => {
  it('are dropped, never closed: a held client keeps working, and it and the next client share one login', async () => {
    const { server, credentials } = await serve(2);
    accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url }, maxClients: 1 });
    const one = accounts.client('shop-1');
    await one.sendText({ user_id: 'u', msg: 'first' });
    server.account('shop-1').injectFault({ kind: 'delay', delayMs: 300 }, { path: '/broadcast-message' });
    const inFlight = one.sendText({ user_id: 'u', msg: 'in flight' });
    await accounts.client('shop-2').sendText({ user_id: 'u', msg: 'other' });
    expect(accounts.size).toBe(1);
    expect((await settleWithin(inFlight, 5000, 'the send in flight')).ok).toBe(true);
    // Dropped from the accounts, still held here: it goes on sending.
    await one.sendText({ user_id: 'u', msg: 'held' });
    const again = accounts.client('shop-1');
    expect(again).not.toBe(one);
    await again.sendText({ user_id: 'u', msg: 'again' });
    await one.sendText({ user_id: 'u', msg: 'held again' });
    expect(texts(server, 'shop-1')).toEqual(['first', 'in flight', 'held', 'again', 'held again']);
    expect(logins(server, 'shop-1')).toBe(1);
    // accounts.close() reaches a dropped client that is still held.
    await accounts.close();
    const error = await rejectsWithin(one.sendText({ user_id: 'u', msg: 'after close' }), 5000);
    expect(error).toBeInstanceOf(OAConnectionError);
    expect((error as Error).message).toContain('closed');
    accounts = undefined;
  });
});

describe('a base URL named by the resolver', () => {
  it('sends there, through a pool of its own; the others keep the default', async () => {
    const home = await serve(1, 'home');
    const away = await serve(1, 'away');
    const db = new Map([
      ['home-1', { apiKey: 'key-home-1', apiSecret: 'secret-home-1-abcdef' }],
      ['away-1', { apiKey: 'key-away-1', apiSecret: 'secret-away-1-abcdef', baseUrl: away.server.url }],
    ]);
    accounts = createAccounts({
      credentials: (account) => db.get(account),
      clientOptions: { baseUrl: home.server.url },
    });
    await accounts.client('home-1').sendText({ user_id: 'u', msg: 'home' });
    await accounts.client('away-1').sendText({ user_id: 'u', msg: 'away' });
    expect(texts(home.server, 'home-1')).toEqual(['home']);
    expect(texts(away.server, 'away-1')).toEqual(['away']);
    expect(away.server.connections.accepted).toBe(1);
    expect(home.server.connections.accepted).toBe(1);
  });

  it('is checked as the client option is: plain http off loopback refused, nothing sent', async () => {
    const { server } = await serve(1);
    accounts = createAccounts({
      credentials: () => ({
        apiKey: 'key-shop-1',
        apiSecret: 'secret-shop-1-abcdef',
        baseUrl: 'http://oa.example.com',
      }),
      clientOptions: { baseUrl: server.url },
    });
    const error = await rejectsWithin(accounts.client('shop-1').sendText({ user_id: 'u', msg: 'hi' }), 5000);
    expect(error).toBeInstanceOf(OAConfigError);
    expect((error as Error).message).toContain('shop-1');
    expect(server.connections.accepted).toBe(0);
  });
});

describe("each account's share of the pool", () => {
  const BROADCAST = '/broadcast-message';
  /** The sends of `username` the fake received and holds (its OA stuck). */
  const held = (server: MockServer, username: string) =>
    server.account(username).requests.filter((r) => r.path.endsWith(BROADCAST) && r.outcome === 'hang')
      .length;

  /**
   * `shop-1`'s OA stops answering sends, and `n` of its sends go out with no deadline of their own:
   * they hang until the accounts close. Both accounts are logged in first. Resolves once the fake
   * holds `reached` of them, with the calls, which the caller settles after closing the accounts.
   */
  async function stuck(server: MockServer, n: number, reached: number) {
    const one = (accounts as OAAccounts).client('shop-1');
    await one.sendText({ user_id: 'u', msg: 'warm' });
    await (accounts as OAAccounts).client('shop-2').sendText({ user_id: 'u', msg: 'warm' });
    server.account('shop-1').injectFault({ kind: 'hang' }, { path: BROADCAST, times: 1000 });
    const calls = Array.from({ length: n }, (_, i) => one.sendText({ user_id: 'u', msg: `stuck ${i}` }));
    for (const call of calls) call.catch(() => {});
    const since = Date.now();
    while (held(server, 'shop-1') < reached && Date.now() - since < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // The rest, if any were to go out, have had their turn of the event loop to do so.
    await new Promise((resolve) => setTimeout(resolve, 100));
    return calls;
  }

  /** Closes the accounts and waits (bounded) for the stuck calls to settle: nothing left hanging. */
  async function release(calls: Promise<unknown>[]) {
    await accounts?.close();
    accounts = undefined;
    const settled = await settleWithin(Promise.allSettled(calls), 5000, 'the stuck sends');
    expect(settled.ok).toBe(true);
  }

  for (const maxConnections of [undefined, 8]) {
    it(`64 sends of a stuck account leave a calm account its sockets (maxConnections ${maxConnections ?? 'default'})`, async () => {
      const { server, credentials } = await serve(2);
      accounts = createAccounts({
        credentials,
        clientOptions: { baseUrl: server.url },
        ...(maxConnections === undefined ? {} : { maxConnections }),
      });
      const share = Math.floor((maxConnections ?? 64) / 4);
      const calls = await stuck(server, 64, share);
      const two = accounts.client('shop-2');
      const calm = Array.from({ length: 5 }, (_, i) =>
        settleWithin(two.sendText({ user_id: 'u', msg: `calm ${i}` }, { timeoutMs: 3000 }), 5000),
      );
      const outcomes = await Promise.all(calm);
      expect(outcomes.map((o) => (o.ok ? 'sent' : String(o.error)))).toEqual(Array(5).fill('sent'));
      // On sockets of their own, the five may arrive in any order.
      expect(texts(server, 'shop-2').sort()).toEqual([
        'calm 0',
        'calm 1',
        'calm 2',
        'calm 3',
        'calm 4',
        'warm',
      ]);
      // The stuck account holds its share of the sockets, no more.
      expect(held(server, 'shop-1')).toBe(share);
      await release(calls);
    });
  }

  it("a send beyond the account's share waits in its turn, and given up there is not sent and says where it waited", async () => {
    const { server, credentials } = await serve(2);
    accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url } });
    const calls = await stuck(server, 64, 16);
    const one = accounts.client('shop-1');
    const extra = await Promise.all(
      [0, 1, 2].map((i) =>
        rejectsWithin(one.sendText({ user_id: 'u', msg: `extra ${i}` }, { timeoutMs: 300 }), 5000),
      ),
    );
    for (const error of extra) {
      expect(error).toBeInstanceOf(OATimeoutError);
      expect((error as OATimeoutError).deliveryUnknown).toBe(false);
      expect((error as Error).message).toMatch(
        /^POST \/.*broadcast-message not sent: its timeoutMs of 300 ms ran out while waiting \d+ ms for a connection of the accounts' pool \(this account holds 16 of its 16 to 127\.0\.0\.1:\d+\)$/,
      );
    }
    const received = server
      .account('shop-1')
      .requests.map((r) => (r.body as { msg?: string } | undefined)?.msg);
    expect(received.filter((msg) => msg?.startsWith('extra'))).toEqual([]);
    await release(calls);
  });

  it("the attempt's own timeoutMs bounds a wait in line too: not sent, never received, and says so", async () => {
    const { server, credentials } = await serve(1);
    accounts = createAccounts({
      credentials,
      // Each upload its own request (the same bytes would wait for the first one's answer).
      clientOptions: { baseUrl: server.url, timeoutMs: 400, maxRetries: 0, reuseUploads: false },
      maxConnections: 8,
    });
    const one = accounts.client('shop-1');
    await one.sendText({ user_id: 'u', msg: 'warm' });
    // Uploads have their own, longer, attempt time: the two hung ones hold the share past the send's.
    server.account('shop-1').injectFault({ kind: 'hang' }, { path: /\/upload\//, times: 2 });
    const uploads = [one.uploadImage(PNG), one.uploadImage(PNG)];
    for (const upload of uploads) upload.catch(() => {});
    const since = Date.now();
    while (server.account('shop-1').requests.filter((r) => r.outcome === 'hang').length < 2) {
      if (Date.now() - since > 5000) expect.fail('the uploads did not reach the server');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const error = await rejectsWithin(one.sendText({ user_id: 'u', msg: 'in line' }), 5000);
    expect(error).toBeInstanceOf(OATimeoutError);
    expect((error as OATimeoutError).deliveryUnknown).toBe(false);
    expect((error as Error).message).toMatch(
      /broadcast-message not sent: waited 400 ms for a connection of the accounts' pool \(this account holds 2 of its 2 to 127\.0\.0\.1:\d+\)$/,
    );
    expect(texts(server, 'shop-1')).toEqual(['warm']);
    await release(uploads);
  });

  it('a share larger than the pool, or not a positive integer, is refused at creation', async () => {
    const { server, credentials } = await serve(1);
    const make = (maxConnectionsPerAccount: number) => () =>
      createAccounts({
        credentials,
        clientOptions: { baseUrl: server.url },
        maxConnections: 8,
        maxConnectionsPerAccount,
      });
    expect(make(9)).toThrow(OAConfigError);
    expect(make(9)).toThrow(/maxConnectionsPerAccount \(9\) must not exceed maxConnections \(8\)/);
    expect(make(0)).toThrow(/maxConnectionsPerAccount/);
    expect(make(1.5)).toThrow(OAConfigError);
  });

  it('several stuck accounts holding the whole pool: a calm send waits in the pool, bounded, not sent, and says so', async () => {
    const { server, credentials } = await serve(3);
    accounts = createAccounts({
      credentials,
      clientOptions: { baseUrl: server.url },
      maxConnections: 4,
      maxConnectionsPerAccount: 2,
    });
    const three = accounts.client('shop-3');
    await three.sendText({ user_id: 'u', msg: 'warm' });
    const calls = await stuck(server, 4, 2);
    const two = accounts.client('shop-2');
    server.account('shop-2').injectFault({ kind: 'hang' }, { path: BROADCAST, times: 1000 });
    calls.push(...[0, 1].map((i) => two.sendText({ user_id: 'u', msg: `stuck ${i}` })));
    for (const call of calls) call.catch(() => {});
    const since = Date.now();
    while (held(server, 'shop-2') < 2 && Date.now() - since < 5000) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const error = await rejectsWithin(
      three.sendText({ user_id: 'u', msg: 'calm' }, { timeoutMs: 300 }),
      5000,
    );
    expect(error).toBeInstanceOf(OATimeoutError);
    expect((error as OATimeoutError).deliveryUnknown).toBe(false);
    expect((error as Error).message).toMatch(
      /not sent: its timeoutMs of 300 ms ran out while waiting for a connection to 127\.0\.0\.1:\d+$/,
    );
    expect(texts(server, 'shop-3')).toEqual(['warm']);
    await release(calls);
  });
});
