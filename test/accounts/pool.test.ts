// The accounts' shared connection pools (one per base URL, owned by createAccounts, bounded), clients
// closed beyond maxClients once their calls end, and base URLs named by the credentials resolver.
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
