/**
 * The web inbox of the fake server in real Chromium: what the SDK sends appears in each recipient's
 * conversation as it happens, media play from the fake, a reply typed in the page reaches a webhook
 * receiver, and faults switched on in the page reach the SDK.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { items, OAClient, OAInternalServerError } from '../../src/index.js';
import { createMockServer, DEFAULT_GREETING, type MockServer } from '../../src/testing/index.js';
import { createWebhookHandler, getMessageText, type WebhookEvent } from '../../src/webhook/index.js';
import { type Listening, listen } from '../helpers/listen.js';
import { endTranscodesOnceWaitedFor } from '../helpers/transcode.js';
import { asMessage } from '../webhook/support.js';
import { type Browser, haveChromium, launchChromium, readmeScreenshot, screenshotDir } from './chromium.js';

const fixture = (name: string) => new URL(`../fixtures/media/${name}`, import.meta.url);
const GROUP = '6d1c3b52-4a7b-4c1e-9f3a-2b6d0e4c8a22';
const SESSION = '9e2f4c63-5b8c-4d2f-8a4b-3c7e1f5d9b33';
const USERS = ['user-1', 'user-2', 'user-3', 'user-4', 'user-5'];
const SALE_LINK = 'https://shop.example.com/sale';
const EXTERNAL_IMAGE = 'https://cdn.example.com/banner.jpg';
const SECRET = 'inbox-test-secret-4f9c2a';

const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });

describe.skipIf(!haveChromium)('the web inbox, in Chromium', () => {
  let mock: MockServer;
  let client: OAClient;
  let browser: Browser;
  let receiver: Listening;
  const events: WebhookEvent[] = [];

  beforeAll(async () => {
    mock = await createMockServer({
      apiSecret: SECRET,
      // Videos convert until endTranscodesOnceWaitedFor: sendVideo meets one wait.
      transcodeMs: 3_600_000,
      members: {
        all: USERS,
        groups: { [GROUP]: ['user-3', 'user-4'] },
        memberSessions: { [SESSION]: ['user-4', 'user-5'] },
      },
    });
    client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    receiver = await listen(
      createWebhookHandler({
        onEvent: (event) => {
          events.push(event);
        },
      }),
    );
    browser = await launchChromium();
    await browser.page.goto(mock.url);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await receiver?.close();
    await mock?.close();
  });

  /** Opens a user's conversation and reads its bubbles: `[type, text]` each. */
  async function conversation(user: string): Promise<string[][]> {
    const { page } = browser;
    await page.click(`#users li[data-user="${user}"]`);
    await page.waitForSelector(`#title[data-user="${user}"]`);
    return page.$$eval('#messages .msg', (nodes) =>
      nodes.map((n) => [n.getAttribute('data-type') ?? '', (n.firstElementChild?.textContent ?? '').trim()]),
    );
  }

  it("shows every kind of message and every broadcast target, live, in each recipient's conversation", async () => {
    const { page } = browser;
    // Sent with the page already open: everything below arrives without a reload.
    await client.sendGreeting({ user_id: 'user-1' });
    await client.sendText({ user_id: 'user-1', msg: 'Your order has shipped.', desc: 'Order update' });
    const image = await client.uploadImage(fixture('sample.png'));
    await client.sendImage({ user_id: 'user-1', image_url: image.url });
    await client.sendImage({ user_id: 'user-1', image_url: image.url, link: SALE_LINK });
    const audio = await client.uploadAudio(fixture('sample.wav'));
    await client.sendAudio({ user_id: 'user-2', ...audio });
    const { ticket_id } = await client.uploadVideo(fixture('sample.webm'));
    const video = client.sendVideo({ user_id: 'user-2', ticket_id });
    await endTranscodesOnceWaitedFor(expect, mock);
    await video;
    await client.sendImage({ user_id: 'user-5', image_url: EXTERNAL_IMAGE });
    await client.broadcast({ target: 'all', items: [items.text('Spring sale: 20% off.', 'Spring sale')] });
    const card = {
      type: 'bubble',
      body: {
        type: 'box',
        layout: 'vertical',
        contents: [
          { type: 'text', text: 'Order #1042 shipped', weight: 'bold' },
          { type: 'text', text: 'Arrives Friday' },
        ],
      },
      footer: {
        type: 'button',
        action: { type: 'uri', label: 'Track', uri: 'https://shop.example.com/track' },
      },
    };
    await client.broadcast({ target: 'selected', user_ids: ['user-1', 'user-2'], items: [items.flex(card)] });
    await client.broadcast({
      target: 'single',
      user_ids: ['user-2'],
      items: [items.imageLink(image.url, SALE_LINK)],
    });
    await client.broadcastToGroup({
      account_provider_group_id: GROUP,
      items: [items.text('Group news'), items.audio(audio)],
    });
    await client.broadcastToMemberSession({
      member_group_broadcast_id: SESSION,
      items: [items.video(ticket_id), items.text('Session hello')],
    });

    await poll(() => page.locator('#broadcasts li').count()).toBe(5);
    const greeting = DEFAULT_GREETING.data[0]?.msg ?? '';
    await poll(() => conversation('user-1')).toEqual([
      ['message', greeting],
      ['message', 'Your order has shipped.'],
      ['image', ''],
      ['oa_image_link', `opens ${SALE_LINK}`],
      ['message', 'Spring sale: 20% off.'],
      ['flex', 'Order #1042 shippedArrives FridayTrack'],
    ]);
    expect(await page.locator('#messages .push .desc').allTextContents()).toEqual([
      'Order update',
      'Spring sale',
    ]);
    expect(await page.getAttribute('#messages a.image-link', 'href')).toBe(SALE_LINK);
    expect(await page.getAttribute('#messages .flex-button', 'href')).toBe('https://shop.example.com/track');
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll<HTMLImageElement>('#messages img')).every(
        (img) => img.naturalWidth === 32,
      ),
    );
    await page.screenshot({ path: join(screenshotDir, 'conversation-user-1.png') });

    expect(await conversation('user-2')).toEqual([
      ['audio', '1 s, 16044 bytes'],
      ['video', ''],
      ['message', 'Spring sale: 20% off.'],
      ['flex', 'Order #1042 shippedArrives FridayTrack'],
      ['oa_image_link', `opens ${SALE_LINK}`],
    ]);
    // The media elements load the uploaded bytes from the fake (metadata at least: they can play).
    await page.waitForFunction(() => {
      const media = Array.from(
        document.querySelectorAll<HTMLMediaElement>('#messages video, #messages audio'),
      );
      return media.length === 2 && media.every((m) => m.readyState >= 1 && m.error === null);
    });
    const durations = await page.$$eval('#messages video, #messages audio', (nodes) =>
      (nodes as HTMLMediaElement[]).map((m) => m.duration > 0),
    );
    expect(durations).toEqual([true, true]);
    await page.screenshot({ path: join(screenshotDir, 'conversation-user-2.png') });

    expect(await conversation('user-3')).toEqual([
      ['message', 'Spring sale: 20% off.'],
      ['message', 'Group news'],
      ['audio', '1 s, 16044 bytes'],
    ]);
    expect(await conversation('user-4')).toEqual([
      ['message', 'Spring sale: 20% off.'],
      ['message', 'Group news'],
      ['audio', '1 s, 16044 bytes'],
      ['video', ''],
      ['message', 'Session hello'],
    ]);
    expect(await conversation('user-5')).toEqual([
      ['image', `Image at ${EXTERNAL_IMAGE} (another host: not loaded)`],
      ['message', 'Spring sale: 20% off.'],
      ['video', ''],
      ['message', 'Session hello'],
    ]);

    // The broadcast list: each with its target, recipients and record.
    const broadcasts = await page.$$eval('#broadcasts li', (nodes) =>
      nodes.map((n) => [n.getAttribute('data-target'), n.querySelector('.recipients')?.textContent]),
    );
    expect(broadcasts).toEqual([
      ['member-session', 'reached: user-4, user-5'],
      ['group', 'reached: user-3, user-4'],
      ['single', 'reached: user-2'],
      ['selected', 'reached: user-1, user-2'],
      ['all', `reached: ${USERS.join(', ')}`],
    ]);
    expect(await page.locator('#broadcasts li').first().textContent()).toMatch(/job ~0 min/);

    // Nothing came from anywhere but the fake, and no secret or token reached the page.
    expect(browser.requested.filter((url) => !url.startsWith(`${mock.url}/`))).toEqual([]);
    expect(browser.requested.filter((url) => url.includes('/uploads/'))).toEqual([]);
    const tokens = mock.requests.map((r) => r.headers.authorization?.replace(/^Bearer /, '')).filter(Boolean);
    expect(tokens.length).toBeGreaterThan(0);
    const seen = await page.content();
    const state = await page.evaluate(() => fetch('/_inbox/state').then((r) => r.text()));
    for (const secret of [SECRET, ...new Set(tokens)]) {
      expect(seen).not.toContain(secret);
      expect(state).not.toContain(secret);
    }
  });

  it('posts a reply typed in the page to the webhook receiver and shows its answer', async () => {
    const { page } = browser;
    await page.fill('#webhook-url', `${receiver.url}/oa/webhook`);
    await page.click('#save-webhook');
    await poll(() => mock.webhookUrl).toBe(`${receiver.url}/oa/webhook`);

    await conversation('user-3');
    await page.fill('#reply-text', 'Is the blue jacket in stock?');
    await page.press('#reply-text', 'Enter');
    await poll(() => events.length).toBe(1);
    expect(asMessage(events[0]).data.From_Account).toBe('user-3');
    expect(getMessageText(events[0] as WebhookEvent)).toBe('Is the blue jacket in stock?');
    await poll(() => page.textContent('#messages .msg.user .answer')).toMatch(/webhook answered 200/);
    await poll(() => page.textContent('#reply-status')).toMatch(/^Receiver answered 200/);

    await page.selectOption('#reply-kind', 'image');
    await page.click('#compose button');
    await poll(() => events.length).toBe(2);
    expect(asMessage(events[1]).data.MsgBody[0]?.MsgType).toBe('TIMImageElem');
    await poll(() => page.locator('#messages .msg.user').count()).toBe(2);
    await page.screenshot({ path: join(screenshotDir, 'reply.png') });
  });

  it('switches on faults from the page: the SDK gets them, the timeline shows them and the retries', async () => {
    const { page } = browser;
    await page.selectOption('#fault-kind', 'error');
    await page.fill('#fault-times', '1');
    await page.fill('#fault-status', '503');
    await page.click('#fault-form button');
    await poll(() => page.textContent('#faults')).toMatch(/error 503 .* 1 left/);
    const failed = await client
      .sendText({ user_id: 'user-1', msg: 'during the outage' })
      .catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(OAInternalServerError);
    expect(failed).toMatchObject({ status: 503, deliveryUnknown: true });
    await poll(() => page.locator('#timeline tr[data-status="503"]').count()).toBe(1);

    // A 429 the SDK waits out, then sends again: the second request is marked as a retry.
    await page.selectOption('#fault-kind', 'rate-limit');
    await page.click('#fault-form button');
    await poll(() => mock.faults.length).toBe(1);
    await client.sendText({ user_id: 'user-1', msg: 'after a 429' });
    const rateLimited = mock.requests.findIndex((r) => r.status === 429);
    await poll(() => page.getAttribute('#timeline tr[data-retry]', 'data-retry')).toBe(String(rateLimited));

    // Expired tokens: a 401, one refresh, the request replayed.
    // The click only starts the page's request: the tokens are expired once the fake answers it.
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/_inbox/tokens/expire') && r.ok(), { timeout: 10_000 }),
      page.click('[data-action="tokens/expire"]'),
    ]);
    await client.sendText({ user_id: 'user-1', msg: 'with a fresh token' });
    await poll(() => page.locator('#timeline tr[data-kind="refresh"]').count()).toBe(1);
    const expired = mock.requests.findIndex((r) => r.status === 401);
    // Only the retries when filtered: of the 429, of the 401, and of sendVideo's transcode wait.
    await page.selectOption('#filter-kind', 'retries');
    const converting = mock.requests.findIndex((r) => r.code === 'BAD_REQUEST');
    await poll(() =>
      page.$$eval('#timeline tr', (rows) => rows.map((r) => r.getAttribute('data-retry'))),
    ).toEqual([expired, rateLimited, converting].map(String));
    expect(await page.locator('#timeline tr').first().textContent()).toMatch(
      new RegExp(`retry of #${expired}`),
    );
    await page.selectOption('#filter-kind', '');
    await page.screenshot({ path: join(screenshotDir, 'faults.png') });
  });

  it('saves the screenshot the README shows', async () => {
    const { page } = browser;
    await conversation('user-1');
    await page.evaluate(() => {
      const box = document.getElementById('messages');
      if (box) box.scrollTop = 0;
    });
    const shot = join(screenshotDir, 'inbox.png');
    await page.screenshot({ path: shot });
    if (process.env.README_SCREENSHOT === '1') copyFileSync(shot, readmeScreenshot);
  });
});
