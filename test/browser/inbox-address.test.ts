/**
 * The web inbox opens the account its address names: `/?account=shop-b`, as a link or a headless
 * screenshot gives it, shows that account's conversations from the first draw, not the first
 * account's until one clicks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { type Browser, haveChromium, launchChromium } from './chromium.js';

const SHOP_A = { username: 'shop-a', apiKey: 'key-a', apiSecret: 'address-secret-a-5b2e' };
const SHOP_B = { username: 'shop-b', apiKey: 'key-b', apiSecret: 'address-secret-b-8f1c' };

const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

describe.skipIf(!haveChromium)('the web inbox opened at an account, in Chromium', () => {
  let mock: MockServer;
  let browser: Browser;

  beforeAll(async () => {
    mock = await createMockServer({ accounts: [SHOP_A, SHOP_B] });
    for (const [account, user_id, msg] of [
      [SHOP_A, 'alice', 'Hello from shop A'],
      [SHOP_B, 'bob', 'Hello from shop B'],
    ] as const) {
      const { apiKey, apiSecret } = account;
      const client = new OAClient({ baseUrl: mock.url, apiKey, apiSecret, maxRetries: 0 });
      await client.sendText({ user_id, msg });
      await client.close();
    }
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await mock?.close();
  });

  it("/?account=shop-b shows shop-b's conversation, with no click", async () => {
    const { page } = browser;
    await page.goto(`${mock.url}/?account=shop-b`);
    await poll(() => page.getAttribute('#accounts li.selected', 'data-account')).toBe('shop-b');
    await poll(() =>
      page.$$eval('#users li', (nodes) => nodes.map((n) => n.getAttribute('data-user'))),
    ).toEqual(['bob']);
    await poll(() =>
      page.$$eval('#messages .msg', (nodes) => nodes.map((n) => (n.textContent ?? '').trim())),
    ).toEqual([expect.stringContaining('Hello from shop B')]);
    expect(await page.content()).not.toContain('Hello from shop A');
  });
});
