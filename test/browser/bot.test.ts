/**
 * Chatting with a bot in the web inbox, in real Chromium: the example support bot runs in its own
 * process (`examples/support-bot.ts --listen`) against the fake; a message typed in the page as a user
 * gets the bot's reply in that user's phone view.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { type Browser, haveChromium, launchChromium, screenshotDir } from './chromium.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 15_000, interval: 100 });

describe.skipIf(!haveChromium)('a bot behind the web inbox, in Chromium', () => {
  let mock: MockServer;
  let browser: Browser;
  let bot: ChildProcess;
  let output = '';

  beforeAll(async () => {
    mock = await createMockServer({ members: { all: ['user-1', 'user-2'] } });
    const env = {
      ...process.env,
      OA_BASE_URL: mock.url,
      OA_API_KEY: mock.apiKey,
      OA_API_SECRET: mock.apiSecret,
      OA_USER_ID: 'user-1',
      PORT: '0',
    };
    bot = spawn(process.execPath, ['--import', 'tsx', 'examples/support-bot.ts', '--listen'], {
      cwd: root,
      env,
    });
    bot.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    bot.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const deadline = Date.now() + 30_000;
    while (!/set (\S+) as webhook_url/.test(output) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
    }
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    bot?.kill('SIGKILL');
    await browser?.close();
    await mock?.close();
  });

  it("a message typed as a user gets the example bot's reply in the phone view", async () => {
    const { page } = browser;
    const webhook = /set (\S+) as webhook_url/.exec(output)?.[1];
    expect(webhook, output).toBeDefined();
    await page.goto(mock.url);
    await page.fill('#webhook-url', webhook ?? '');
    await page.click('#save-webhook');
    await poll(() => mock.webhookUrl).toBe(webhook);

    await page.click('#users li[data-user="user-1"]');
    await page.waitForSelector('#title[data-user="user-1"]');
    await page.fill('#reply-text', 'order 1001');
    await page.press('#reply-text', 'Enter');
    // The user's message, then the bot's reply, both in the conversation.
    await poll(() =>
      page.$$eval('#messages .msg', (nodes) =>
        nodes.map((n) => (n.firstElementChild?.textContent ?? '').trim()),
      ),
    ).toEqual(
      expect.arrayContaining(['order 1001', 'Order 1001 is shipped on Monday; it arrives tomorrow.']),
    );

    await page.fill('#reply-text', 'status');
    await page.press('#reply-text', 'Enter');
    // The order is remembered in the session: the second answer needs no number.
    await poll(() => page.locator('#messages .msg', { hasText: 'Order 1001 is shipped' }).count()).toBe(2);
    const replies = mock.deliveries
      .filter((d) => d.recipients.includes('user-1'))
      .map((d) => d.items[0]?.msg);
    expect(replies).toEqual([
      'Order 1001 is shipped on Monday; it arrives tomorrow.',
      'Order 1001 is shipped on Monday; it arrives tomorrow.',
    ]);
    await page.screenshot({ path: join(screenshotDir, 'bot.png') });
  });
});
