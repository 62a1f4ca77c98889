/**
 * The web inbox reads well, checked by layout in real Chromium: what a phone would show stays inside
 * the phone, a reply that did not reach the webhook looks failed, the timeline's rows stay one line,
 * routine transcode polls are not errors, the fake's own files load, the newest message is in view,
 * and the fault form shows only the fields of the chosen fault.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { type Listening, listen } from '../helpers/listen.js';
import { freePort } from '../helpers/ports.js';
import { endTranscodesOnceWaitedFor } from '../helpers/transcode.js';
import { type Browser, haveChromium, launchChromium } from './chromium.js';

const fixture = (name: string) => new URL(`../fixtures/media/${name}`, import.meta.url);
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 50 });
const shots = mkdtempSync(join(tmpdir(), 'oa-inbox-layout-'));

type Box = { x: number; y: number; width: number; height: number };
const inside = (inner: Box, outer: Box) =>
  inner.x >= outer.x - 0.5 &&
  inner.y >= outer.y - 0.5 &&
  inner.x + inner.width <= outer.x + outer.width + 0.5 &&
  inner.y + inner.height <= outer.y + outer.height + 0.5;

describe.skipIf(!haveChromium)('the web inbox layout, in Chromium', () => {
  let mock: MockServer;
  let client: OAClient;
  let browser: Browser;
  let receiver: Listening;

  beforeAll(async () => {
    // Videos convert until endTranscodesOnceWaitedFor.
    mock = await createMockServer({ transcodeMs: 3_600_000 });
    client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    receiver = await listen((_req, res) => void res.writeHead(200).end('ok'));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await client?.close();
    await receiver?.close();
    await mock?.close();
  });

  const open = async (user: string) => {
    const { page } = browser;
    // A fresh load each time (a new hash alone would not reload the page).
    await page.goto('about:blank');
    await page.goto(`${mock.url}/#user=${encodeURIComponent(user)}`);
    await page.waitForSelector(`#title[data-user="${user}"]`);
    await poll(() => page.textContent('#live')).toBe('live');
  };
  const box = async (selector: string) => {
    const found = await browser.page.locator(selector).first().boundingBox();
    if (!found) throw new Error(`${selector} is not shown`);
    return found;
  };

  it('a long push desc stays inside the phone frame', async () => {
    await client.sendText({
      user_id: 'push-user',
      msg: 'Short message.',
      desc: `Order${'0123456789'.repeat(30)}`,
    });
    await client.sendText({
      user_id: 'push-user',
      msg: 'A long word: https://example.com/'.concat('a'.repeat(200)),
      desc: 'Sale ends tonight: '.repeat(20),
    });
    await open('push-user');
    const phone = await box('.phone');
    for (const selector of ['.push', '.push .desc', '#messages .msg']) {
      const all = await browser.page.locator(selector).all();
      expect(all.length).toBeGreaterThan(0);
      for (const el of all) expect(inside((await el.boundingBox()) as Box, phone)).toBe(true);
    }
    await browser.page.screenshot({ path: join(shots, 'push.png') });
  });

  it('a reply that did not reach the webhook is styled apart from a delivered one', async () => {
    const { page } = browser;
    await client.sendText({ user_id: 'reply-user', msg: 'How can we help?' });
    await open('reply-user');
    mock.webhookUrl = `${receiver.url}/hook`;
    await page.fill('#reply-text', 'Delivered one');
    await page.press('#reply-text', 'Enter');
    await poll(() => page.textContent('#reply-status')).toMatch(/^Receiver answered 200/);
    // A port nothing listens on: the post fails.
    mock.webhookUrl = `http://127.0.0.1:${await freePort()}/hook`;
    await page.fill('#reply-text', 'Lost one');
    await page.press('#reply-text', 'Enter');
    await poll(() => page.textContent('#reply-status')).toMatch(/^Not delivered/);
    const style = (text: string) =>
      page.locator('#messages .msg.user', { hasText: text }).evaluate((el) => {
        const s = getComputedStyle(el);
        return {
          background: s.backgroundColor,
          border: s.borderColor,
          failed: el.classList.contains('failed'),
        };
      });
    // The bubble is drawn again once the page hears of the failure, which may come after the status line.
    await poll(async () => (await style('Lost one')).failed).toBe(true);
    const delivered = await style('Delivered one');
    const lost = await style('Lost one');
    expect(delivered.failed).toBe(false);
    expect(lost.background).not.toBe(delivered.background);
    await page.screenshot({ path: join(shots, 'replies.png') });
  });

  it('timeline rows with badges keep the request on one line; transcode polls are not errors', async () => {
    const { page } = browser;
    const video = await client.uploadVideo(fixture('sample.mp4'));
    // The SDK polls while the video converts: 400s that are routine, not errors.
    const sent = client.sendVideo({ user_id: 'video-user', ticket_id: video.ticket_id });
    await endTranscodesOnceWaitedFor(expect, mock);
    await sent;
    mock.injectFault({ kind: 'error', status: 503 }, { path: '/webhook/broadcast-message' });
    await client.sendText({ user_id: 'video-user', msg: 'x' }).catch(() => {});
    await client.sendText({ user_id: 'video-user', msg: 'x' });
    // A laptop's screen: the timeline gets less room than the phone and the lists.
    await page.setViewportSize({ width: 1180, height: 800 });
    await open('video-user');
    const polls = mock.requests.filter((r) => r.status === 400).length;
    expect(polls).toBeGreaterThan(0);
    await poll(() => page.locator('#timeline tr').count()).toBe(mock.requests.length);
    for (const row of await page.locator('#timeline tr').all()) {
      const summary = (await row.locator('td details summary').boundingBox()) as Box;
      const lineHeight = await row
        .locator('td details summary')
        .evaluate((el) => Number.parseFloat(getComputedStyle(el).lineHeight) || 16);
      expect(summary.height).toBeLessThan(lineHeight * 1.5);
    }
    await page.selectOption('#filter-kind', 'errors');
    await poll(() =>
      page.$$eval('#timeline tr', (rows) => rows.map((r) => r.getAttribute('data-status'))),
    ).toEqual(['503']);
    await page.selectOption('#filter-kind', '');
    await page.screenshot({ path: join(shots, 'timeline.png') });
    await page.setViewportSize({ width: 1400, height: 860 });
  });

  it("an image on the fake's own host is shown, not labelled another host", async () => {
    const { page } = browser;
    const image = await client.uploadImage(fixture('sample.png'));
    // The same file by another loopback name of the fake.
    const aliased = image.url.replace('127.0.0.1', 'localhost');
    await client.sendImage({ user_id: 'image-user', image_url: aliased });
    await client.sendImage({ user_id: 'image-user', image_url: `${mock.url}/uploads/images/missing.png` });
    await open('image-user');
    await poll(() => page.locator('#messages .msg img').count()).toBe(1);
    const labels = await page.locator('#messages .external').allTextContents();
    expect(labels).toHaveLength(1);
    expect(labels[0]).not.toContain('another host');
    expect(labels[0]).toMatch(/not stored on this fake/);
  });

  it('on first load the conversation shows the newest message', async () => {
    const { page } = browser;
    const image = await client.uploadImage(fixture('sample.png'));
    for (let i = 0; i < 12; i++) {
      await client.sendImage({ user_id: 'long-user', image_url: image.url });
      await client.sendText({ user_id: 'long-user', msg: `Message ${i}` });
    }
    await client.sendText({ user_id: 'long-user', msg: 'The newest message' });
    await open('long-user');
    await poll(() =>
      page
        .locator('#messages img')
        .evaluateAll((imgs) => imgs.every((i) => (i as HTMLImageElement).complete)),
    ).toBe(true);
    await poll(async () => inside(await box('#messages .msg:last-child'), await box('#messages'))).toBe(true);
    await page.screenshot({ path: join(shots, 'newest.png') });
  });

  it('the fault form shows only the fields the chosen fault uses', async () => {
    const { page } = browser;
    const shown = async () => ({
      status: await page.isVisible('#fault-status'),
      delay: await page.isVisible('#fault-delay'),
    });
    await page.selectOption('#fault-kind', 'rate-limit');
    expect(await shown()).toEqual({ status: false, delay: false });
    await page.selectOption('#fault-kind', 'error');
    expect(await shown()).toEqual({ status: true, delay: false });
    await page.selectOption('#fault-kind', 'delay');
    expect(await shown()).toEqual({ status: false, delay: true });
    await page.selectOption('#fault-kind', 'reset');
    expect(await shown()).toEqual({ status: false, delay: false });
    await page.screenshot({ path: join(shots, 'faults.png') });
    console.info(`inbox layout screenshots: ${shots}`);
  });
});
