/**
 * A fake server of several OA accounts behind one base URL: each key logs in to its own account, and
 * the token says which account a request acts on, as the real service does. Driven with the public
 * OAClient (and raw requests where a token is forged) over loopback HTTP.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { OAJobBusyError, OANotFoundError, OARateLimitError, OAUnauthorizedError } from '../../src/index.js';
import { createMockServer, type FakeAccountOptions } from '../../src/testing/index.js';
import { mockServerFixture, post } from './support.js';

const SHOP_A: FakeAccountOptions = { username: 'shop-a', apiKey: 'key-a', apiSecret: 'secret-a-123' };
const SHOP_B: FakeAccountOptions = { username: 'shop-b', apiKey: 'key-b', apiSecret: 'secret-b-456' };
const CLIP = new URL('../fixtures/media/sample.mp4', import.meta.url);

const { start, connect } = mockServerFixture();
const as = (account: FakeAccountOptions) => ({ apiKey: account.apiKey, apiSecret: account.apiSecret });
const bearers = (requests: readonly { headers: Record<string, string> }[]) =>
  requests.map((r) => r.headers.authorization).filter((h) => h !== undefined);

describe('a fake server of several accounts', () => {
  it('logs each key in to its own account: each send carries its token and lands in that account', async () => {
    const mock = await start({ accounts: [SHOP_A, SHOP_B] });
    const a = connect(mock, as(SHOP_A));
    const b = connect(mock, as(SHOP_B));
    await a.sendText({ user_id: 'u1', msg: 'from A' });
    await b.sendText({ user_id: 'u1', msg: 'from B' });
    await b.sendText({ user_id: 'u2', msg: 'again from B' });

    const [shopA, shopB] = [mock.account('shop-a'), mock.account('shop-b')];
    expect(mock.accounts.map((x) => x.username)).toEqual(['shop-a', 'shop-b']);
    expect(shopA).toBe(mock); // the mock is its first account
    expect(mock.account('key-b')).toBe(shopB);
    expect(shopA.deliveries.map((d) => d.items[0]?.msg)).toEqual(['from A']);
    expect(shopB.deliveries.map((d) => [d.user_ids, d.items[0]?.msg])).toEqual([
      [['u1'], 'from B'],
      [['u2'], 'again from B'],
    ]);
    // Each account recorded its own login and sends, and no token of the other.
    expect(shopA.requests.map((r) => r.path.split('/').at(-1))).toEqual(['token', 'broadcast-message']);
    expect(shopA.requests[0]?.body).toMatchObject({ api_key: 'key-a' });
    expect(shopB.requests.map((r) => [r.path.split('/').at(-1), r.status])).toEqual([
      ['token', 201],
      ['broadcast-message', 201],
      ['broadcast-message', 201],
    ]);
    expect(new Set(bearers(shopB.requests)).size).toBe(1);
    expect(bearers(shopA.requests).some((h) => bearers(shopB.requests).includes(h))).toBe(false);
  });

  it("acts with A's token as A only; a token that claims B but is signed by A is refused", async () => {
    const mock = await start({ accounts: [SHOP_A, SHOP_B] });
    const shopB = mock.account('shop-b');
    const token = mock.account('shop-a').issueTokenPair().access_token;
    const sent = await post(mock.url, '/webhook/broadcast-message', { user_id: 'u1', msg: 'hi' }, { token });
    expect(sent.status).toBe(201);
    expect(mock.deliveries).toHaveLength(1);
    expect(shopB.requests).toEqual([]);

    // Same signature, payload saying B's key: B verifies it with its own key and refuses it.
    const [head, payload, signature] = token.split('.');
    const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'));
    const forged = `${head}.${Buffer.from(JSON.stringify({ ...claims, api_key: 'key-b' })).toString('base64url')}.${signature}`;
    const refused = await post(
      mock.url,
      '/webhook/broadcast-message',
      { user_id: 'u1', msg: 'x' },
      { token: forged },
    );
    expect(refused.status).toBe(401);
    expect(shopB.deliveries).toEqual([]);
    expect(shopB.requests.map((r) => r.status)).toEqual([401]);
    expect(mock.deliveries).toHaveLength(1);

    // A refresh token works at the account that issued it, and its new pair acts for that account.
    const pair = await post(mock.url, '/auth/refresh-token', {
      refresh_token: shopB.issueTokenPair().refresh_token,
    });
    const fresh = (pair.body as { data: { access_token: string } }).data.access_token;
    await post(mock.url, '/webhook/broadcast-message', { user_id: 'u9', msg: 'b' }, { token: fresh });
    expect(shopB.deliveries.map((d) => d.user_ids)).toEqual([['u9']]);
  });

  it('gives each account its own rate limits: A saturated does not 429 B', async () => {
    const rateLimit = { general: { max: 4, windowMs: 60_000 } };
    const mock = await start({ accounts: [SHOP_A, SHOP_B], rateLimit });
    // The SDK's own limiter off, no retry: the fake's answer is what the call gets.
    const a = connect(mock, { ...as(SHOP_A), rateLimit: false, maxRetries: 0 });
    const b = connect(mock, { ...as(SHOP_B), rateLimit: false, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await a.sendText({ user_id: 'u1', msg: `a${i}` }); // + the login: 4
    await expect(a.sendText({ user_id: 'u1', msg: 'one too many' })).rejects.toBeInstanceOf(OARateLimitError);
    for (let i = 0; i < 3; i++) await b.sendText({ user_id: 'u1', msg: `b${i}` });

    expect(mock.requests.map((r) => r.status)).toEqual([201, 201, 201, 201, 429]);
    expect(mock.account('shop-b').requests.map((r) => r.status)).toEqual([201, 201, 201, 201]);
  });

  it("keeps uploads and video tickets apart: A's ticket is unknown to B", async () => {
    const mock = await start({ accounts: [SHOP_A, SHOP_B], transcodeMs: 0 });
    const a = connect(mock, as(SHOP_A));
    const b = connect(mock, as(SHOP_B));
    const { ticket_id } = await a.uploadVideo(CLIP);
    expect(mock.account('shop-b').transcodeStatus(ticket_id)).toBeUndefined();
    expect(mock.transcodeStatus(ticket_id)).toBe('finished');
    await expect(
      b.sendVideo({ user_id: 'u1', ticket_id }, { waitForTranscode: false }),
    ).rejects.toBeInstanceOf(OANotFoundError);
    await a.sendVideo({ user_id: 'u1', ticket_id });
    expect(mock.uploads).toHaveLength(1);
    expect(mock.account('shop-b').uploads).toEqual([]);
    expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendVideo']);
  });

  it('keeps members, groups and broadcast jobs per account', async () => {
    const group = '6d1c3b52-4a7b-4c1e-9f3a-2b6d0e4c8a22';
    const mock = await start({
      accounts: [{ ...SHOP_A, members: { all: ['a1', 'a2'], groups: { [group]: ['a1'] } } }, SHOP_B],
      members: { all: ['b1'] },
      broadcastJobMs: 60_000,
    });
    const a = connect(mock, as(SHOP_A));
    const b = connect(mock, { ...as(SHOP_B), maxRetries: 0 });
    await a.broadcast({ target: 'all', items: [{ type: 'message', msg: 'sale' }] });
    // A's job is running: B's own job is not busy, and A's group is no group of B's.
    await b.broadcastToGroup({ account_provider_group_id: group, items: [{ type: 'message', msg: 'x' }] });
    await expect(
      b.broadcast({ target: 'all', items: [{ type: 'message', msg: 'b' }] }),
    ).rejects.toBeInstanceOf(OAJobBusyError);
    expect(mock.deliveries.map((d) => d.recipients)).toEqual([['a1', 'a2']]);
    expect(mock.account('shop-b').deliveries.map((d) => [d.target, d.recipients])).toEqual([['group', []]]);
    expect(mock.account('shop-b').requests.at(-1)?.code).toBe('JOB_BUSY'); // B's own job, still running
  });

  it("posts an inbound event with the account's username, and waits for that account's replies", async () => {
    const mock = await start({ accounts: [SHOP_A, SHOP_B] });
    const clients = { 'shop-a': connect(mock, as(SHOP_A)), 'shop-b': connect(mock, as(SHOP_B)) };
    const events: { username: string }[] = [];
    const receiver = await listen(
      async (event: { username: 'shop-a' | 'shop-b'; data: { From_Account: string } }) => {
        events.push(event);
        await clients[event.username].sendText({ user_id: event.data.From_Account, msg: 'thanks' });
      },
    );
    const replies = await mock.say('u7', 'hello', { account: 'shop-b', webhookUrl: receiver.url });
    expect(events.map((e) => e.username)).toEqual(['shop-b']);
    expect(replies.map((r) => r.user_ids)).toEqual([['u7']]);
    expect(mock.deliveries).toEqual([]); // account A received nothing
    await mock.say('u8', 'hi', { webhookUrl: receiver.url }); // the first account by default
    expect(events.map((e) => e.username)).toEqual(['shop-b', 'shop-a']);
    expect(() => mock.account('shop-c')).toThrow(/no account 'shop-c' \(its accounts: shop-a, shop-b\)/);
  });

  it("rotates one account's secret: the old one and its tokens refused, the other account untouched; counts connections", async () => {
    const mock = await start({ accounts: [SHOP_A, SHOP_B] });
    const a = connect(mock, as(SHOP_A));
    const b = connect(mock, as(SHOP_B));
    await a.sendText({ user_id: 'u1', msg: 'before' });
    await b.sendText({ user_id: 'u1', msg: 'before' });
    // Two clients, each on its own keep-alive socket.
    expect(mock.connections).toEqual({ accepted: 2, open: 2 });
    mock.account('shop-a').rotateSecret('secret-a-789');
    expect(mock.account('shop-a').apiSecret).toBe('secret-a-789');
    await expect(a.sendText({ user_id: 'u1', msg: 'after' })).rejects.toBeInstanceOf(OAUnauthorizedError);
    await b.sendText({ user_id: 'u1', msg: 'after' });
    const renewed = connect(mock, { apiKey: 'key-a', apiSecret: 'secret-a-789' });
    await renewed.sendText({ user_id: 'u1', msg: 'with the new secret' });
    const logins = mock.account('shop-a').requests.filter((r) => r.path.endsWith('/auth/token'));
    expect(logins.map((r) => r.status)).toEqual([201, 401, 201]);
    expect(mock.account('shop-a').deliveries.map((d) => d.items[0]?.msg)).toEqual([
      'before',
      'with the new secret',
    ]);
    expect(mock.account('shop-b').deliveries).toHaveLength(2);
    expect(() => mock.rotateSecret('')).toThrow(TypeError);
  });

  it('resets every account from the mock, one from its account; refuses unclear options', async () => {
    const mock = await start({ accounts: [SHOP_A, SHOP_B] });
    await connect(mock, as(SHOP_B)).sendText({ user_id: 'u1', msg: 'b' });
    await connect(mock, as(SHOP_A)).sendText({ user_id: 'u1', msg: 'a' });
    mock.account('shop-b').reset();
    expect([mock.requests.length, mock.account('shop-b').requests.length]).toEqual([2, 0]);
    mock.reset();
    expect(mock.requests).toEqual([]);

    await expect(createMockServer({ accounts: [SHOP_A], apiKey: 'k' })).rejects.toThrow(TypeError);
    await expect(createMockServer({ accounts: [] })).rejects.toThrow(TypeError);
    await expect(
      createMockServer({ accounts: [SHOP_A, { ...SHOP_B, apiKey: SHOP_A.apiKey }] }),
    ).rejects.toThrow(/apiKey is another account's/);
  });
});

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A webhook receiver on loopback that hands each event to `onEvent`, then answers 200. */
async function listen<E>(onEvent: (event: E) => Promise<void>): Promise<{ url: string }> {
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await onEvent(JSON.parse(Buffer.concat(chunks).toString('utf8')) as E);
    res.writeHead(200).end('ok');
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/oa/webhook` };
}
