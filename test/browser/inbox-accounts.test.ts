/**
 * The web inbox of a fake server with two accounts, in real Chromium: the accounts are listed, each
 * shows its own conversations and timeline, a reply typed in the page reaches the webhook as that
 * account's event, a fault switched on in the page hits that account only, and an address that names
 * an account (`/?account=shop-b`, a link or a headless screenshot) opens on it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAClient, OAInternalServerError } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { type Listening, listen } from '../helpers/listen.js';
import { type Browser, haveChromium, launchChromium } from './chromium.js';

const SHOP_A = { username: 'shop-a', apiKey: 'key-a', apiSecret: 'inbox-secret-a-7d1e' };
const SHOP_B = { username: 'shop-b', apiKey: 'key-b', apiSecret: 'inbox-secret-b-2c9f' };

const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

describe.skipIf(!haveChromium)('the web inbox of two accounts, in Chromium', () => {
  let mock: MockServer;
  let a: OAClient;
  let b: OAClient;
  let browser: Browser;
  let receiver: Listening;
  const events: WebhookEvent[] = [];

  beforeAll(async () => {
    receiver = await listen(createWebhookHandler({ onEvent: (event) => void events.push(event) }));
    mock = await createMockServer({ accounts: [SHOP_A, SHOP_B], webhookUrl: `${receiver.url}/oa/webhook` });
    const client = (account: typeof SHOP_A) =>
      new OAClient({
        baseUrl: mock.url,
        apiKey: account.apiKey,
        apiSecret: account.apiSecret,
        maxRetries: 0,
      });
    a = client(SHOP_A);
    b = client(SHOP_B);
    browser = await launchChromium();
    await browser.page.goto(mock.url);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await a?.close();
    await b?.close();
    await receiver?.close();
    await mock?.close();
  });

  const texts = (selector: string) =>
    browser.page.$$eval(selector, (nodes) => nodes.map((n) => (n.textContent ?? '').trim()));
  const users = () =>
    browser.page.$$eval('#users li', (nodes) => nodes.map((n) => n.getAttribute('data-user')));

  it("lists the accounts and shows each one's conversations and timeline", async () => {
    const { page } = browser;
    await a.sendText({ user_id: 'alice', msg: 'Hello from shop A' });
    await b.sendText({ user_id: 'bob', msg: 'Hello from shop B' });
    await poll(() =>
      page.$$eval('#accounts li', (n) => n.map((li) => li.getAttribute('data-account'))),
    ).toEqual(['shop-a', 'shop-b']);
    expect(await page.isVisible('#accounts-section')).toBe(true);
    await poll(users).toEqual(['alice']);
    await poll(() => texts('#messages .msg')).toEqual([expect.stringContaining('Hello from shop A')]);

    await page.click('#accounts li[data-account="shop-b"]');
    await poll(users).toEqual(['bob']);
    await page.click('#users li[data-user="bob"]');
    await poll(() => texts('#messages .msg')).toEqual([expect.stringContaining('Hello from shop B')]);
    expect(await page.getAttribute('#accounts li.selected', 'data-account')).toBe('shop-b');
    expect(new URL(page.url()).hash).toBe('#account=shop-b&user=bob');
    // B's timeline: its login and its send, nothing of A's.
    await poll(() => page.$$eval('#timeline tr', (rows) => rows.length)).toBe(2);
    // No secret of either account reaches the page.
    const html = await page.content();
    expect(html).not.toContain(SHOP_A.apiSecret);
    expect(html).not.toContain(SHOP_B.apiSecret);

    // A send to A while B is shown: it updates A's count, not B's conversations.
    await a.sendText({ user_id: 'carol', msg: 'A again' });
    await poll(() => texts('#accounts li[data-account="shop-a"] .count')).toEqual(['2 users · 3 requests']);
    expect(await users()).toEqual(['bob']);
  });

  it("posts a reply typed in B's conversation as B's event, and a fault switched on there hits B only", async () => {
    const { page } = browser;
    await page.fill('#reply-text', 'Is it in stock?');
    await page.press('#reply-text', 'Enter');
    await poll(() => events.length).toBe(1);
    expect(events[0]).toMatchObject({ username: 'shop-b', data: { From_Account: 'bob' } });
    await poll(() => page.$$eval('#messages .msg.user', (n) => n.length)).toBe(1);

    await page.selectOption('#fault-kind', 'error');
    await page.fill('#fault-times', '1');
    await page.click('#fault-form button');
    await poll(() => mock.account('shop-b').faults.length).toBe(1);
    expect(mock.faults).toEqual([]);
    await a.sendText({ user_id: 'alice', msg: 'A is fine' });
    await expect(b.sendText({ user_id: 'bob', msg: 'B fails' })).rejects.toBeInstanceOf(
      OAInternalServerError,
    );

    await page.click('#accounts li[data-account="shop-a"]');
    await poll(users).toEqual(['alice', 'carol']);
    expect(await page.$$eval('#messages .msg.user', (n) => n.length)).toBe(0);
  });

  it("/?account=shop-b opens on shop-b's conversations, with no click", async () => {
    const page = await browser.context.newPage();
    try {
      await page.goto(`${mock.url}/?account=shop-b`);
      await poll(() => page.getAttribute('#accounts li.selected', 'data-account')).toBe('shop-b');
      await poll(() =>
        page.$$eval('#users li', (nodes) => nodes.map((n) => n.getAttribute('data-user'))),
      ).toEqual(['bob']);
      await poll(() =>
        page.$$eval('#messages .msg', (nodes) => (nodes[0]?.textContent ?? '').trim()),
      ).toContain('Hello from shop B');
    } finally {
      await page.close();
    }
  });
});
