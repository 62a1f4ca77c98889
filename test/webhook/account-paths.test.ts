// One webhook path per account (createAccounts({ webhookSecret }), accounts.webhookPath): both
// handlers, on loopback, take a request only on a valid path (404 else) and an event only of that
// path's account (403 else: onEvent not run, nothing kept by dedupe).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccounts, type OAClient, OAConfigError } from '../../src/index.js';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  type WebhookEvent,
  type WebhookEventContext,
} from '../../src/webhook/index.js';
import { envelope, eventWith, listen, post, serveFetch } from './support.js';

const SECRET = 'a-webhook-secret-of-the-platform';
const credentials = (account: string) => ({ apiKey: `key-${account}`, apiSecret: `secret-${account}` });
const accounts = createAccounts({
  credentials,
  webhookSecret: SECRET,
  clientOptions: { baseUrl: 'http://127.0.0.1:9' },
});
afterAll(() => accounts.close());

/** A text event that the account `username` received. */
const eventOf = (username: string, seq: number) => ({
  ...eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' } }], seq),
  username,
});

describe('accounts.webhookPath', () => {
  it('is /<account>/<43 base64url characters>, the same for the same secret, other for another', async () => {
    const path = await accounts.webhookPath('shop-a');
    expect(path).toMatch(/^\/shop-a\/[\w-]{43}$/);
    const again = createAccounts({ credentials, webhookSecret: SECRET });
    const other = createAccounts({ credentials, webhookSecret: `${SECRET}-2` });
    expect(await again.webhookPath('shop-a')).toBe(path);
    expect(await other.webhookPath('shop-a')).not.toBe(path);
    expect(await accounts.webhookPath('shop b/1')).toMatch(/^\/shop%20b%2F1\/[\w-]{43}$/);
    expect(await accounts.webhookAccount(`/oa${await accounts.webhookPath('shop b/1')}?x=1`)).toBe(
      'shop b/1',
    );
    await Promise.all([again.close(), other.close()]);
  });

  it('needs a webhookSecret of 16 characters or more', async () => {
    const plain = createAccounts({ credentials });
    await expect(plain.webhookPath('shop-a')).rejects.toThrow(OAConfigError);
    expect(await plain.webhookAccount(await accounts.webhookPath('shop-a'))).toBeUndefined();
    expect(() => createAccounts({ credentials, webhookSecret: 'short' })).toThrow(/webhookSecret/);
    await plain.close();
  });

  it('says how long a short webhookSecret is and how long it must be, never what it holds', () => {
    const refusal = (webhookSecret: unknown) => {
      try {
        createAccounts({ credentials, webhookSecret: webhookSecret as string });
      } catch (error) {
        expect(error).toBeInstanceOf(OAConfigError);
        return (error as Error).message;
      }
      throw new Error('createAccounts took the webhookSecret');
    };
    const tiny = refusal('tiny-secret');
    expect(tiny).toBe(
      'createAccounts: webhookSecret must be a string of at least 16 characters, got a string of 11 characters',
    );
    expect(tiny).not.toContain('tiny-secret');
    expect(refusal('x')).toMatch(/, got a string of 1 character$/);
    expect(refusal('')).toMatch(/, got a string of 0 characters$/);
    // Not a string: what was given, as for any other option.
    expect(refusal(42)).toMatch(/webhookSecret must be a string of at least 16 characters, got 42$/);
    expect(refusal({})).toMatch(/, got an object$/);
  });
});

describe('a handler given accounts without a webhookSecret', () => {
  it('is refused when made (both handlers): there would be no path to take a request on', async () => {
    const plain = createAccounts({ credentials });
    const onEvent = () => {};
    for (const make of [
      () => createWebhookHandler({ accounts: plain, onEvent }),
      () => createFetchWebhookHandler({ accounts: plain, onEvent }),
    ]) {
      expect(make).toThrow(OAConfigError);
      expect(make).toThrow(
        "webhook handler: accounts need createAccounts({ webhookSecret }): each account's webhook path is derived from it",
      );
    }
    // What the handlers read: whether the accounts have paths at all.
    expect([plain.hasWebhookPaths, accounts.hasWebhookPaths]).toEqual([false, true]);
    await plain.close();
  });

  it("takes an object of the app's own that only finds accounts by path", async () => {
    // WebhookAccounts asks for two methods: an object without hasWebhookPaths is still one.
    const own = {
      webhookAccount: async (path: string) => (path.endsWith('/own-token') ? 'shop-own' : undefined),
      accountOf: (event: WebhookEvent) => event.username,
    };
    const seen: (string | undefined)[] = [];
    const server = await listen(
      createWebhookHandler({ accounts: own, onEvent: (_, context) => void seen.push(context.account) }),
    );
    try {
      const taken = await post(`${server.url}/oa/shop-own/own-token`, eventOf('shop-own', 1));
      const refused = await post(`${server.url}/oa/shop-own/other`, eventOf('shop-own', 2));
      expect([taken.status, refused.status, seen]).toEqual([200, 404, ['shop-own']]);
    } finally {
      await server.close();
    }
  });
});

/** The handler under test, served on loopback, and what reached onEvent. */
type Serve = (
  onEvent: (event: WebhookEvent, context: WebhookEventContext<unknown>) => void,
) => Promise<{ url: string; close(): Promise<void> }>;

const servers: [string, Serve][] = [
  ['node handler', (onEvent) => listen(createWebhookHandler({ accounts, onEvent, dedupe: true }))],
  ['fetch handler', (onEvent) => serveFetch(createFetchWebhookHandler({ accounts, onEvent, dedupe: true }))],
];

describe.each(servers)('a %s given accounts', (_, serve) => {
  const received: { username: string | undefined; account: string | undefined; client: OAClient }[] = [];
  let url = '';
  let close: () => Promise<void> = async () => {};
  beforeAll(async () => {
    const server = await serve((event, context) => {
      received.push({ username: event.username, account: context.account, client: accounts.forEvent(event) });
    });
    url = `${server.url}/oa/webhook`;
    close = server.close;
  });
  afterAll(() => close());

  it("delivers an account's event on its own path; onEvent learns the account", async () => {
    received.length = 0;
    const answer = await post(`${url}${await accounts.webhookPath('shop-a')}`, eventOf('shop-a', 1));
    expect([answer.status, answer.json]).toEqual([200, { ok: true }]);
    expect(received.map((r) => [r.username, r.account])).toEqual([['shop-a', 'shop-a']]);
    expect(received[0]?.client).toBe(accounts.client('shop-a'));
  });

  it("refuses (403) an event on A's path that claims B; not run, not remembered by dedupe", async () => {
    received.length = 0;
    const forged = eventOf('shop-b', 2);
    const refused = await post(`${url}${await accounts.webhookPath('shop-a')}`, forged);
    expect(refused.status).toBe(403);
    expect(received).toEqual([]);
    // An event naming no account at all is refused the same way.
    const anonymous = envelope(eventOf('x', 3).data, { username: undefined });
    expect((await post(`${url}${await accounts.webhookPath('shop-a')}`, anonymous)).status).toBe(403);
    // The same event on B's own path is taken, as a first delivery: the refusal kept nothing.
    const taken = await post(`${url}${await accounts.webhookPath('shop-b')}`, forged);
    expect([taken.status, taken.json]).toEqual([200, { ok: true }]);
    expect(received.map((r) => r.account)).toEqual(['shop-b']);
  });

  it('answers 404 to a wrong token, a path of no account, or a token of another account', async () => {
    received.length = 0;
    const good = await accounts.webhookPath('shop-a');
    const wrong = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
    const tokenOfB = (await accounts.webhookPath('shop-b')).split('/')[2];
    for (const path of [wrong, `${good}x`, '/shop-a', '', '/shop-a/', `/shop-a/${tokenOfB}`, '/%E0%A4%A/x']) {
      const answer = await post(`${url}${path}`, eventOf('shop-a', 4));
      expect([path, answer.status]).toEqual([path, 404]);
    }
    expect(received).toEqual([]);
  });
});
