/**
 * The web inbox's contract over plain HTTP (the page itself is tested in Chromium, test/browser):
 * `GET /` is the page, media come from the fake with the uploaded bytes, nothing secret reaches it,
 * replies reach a webhook, faults and token expiry switched on through it reach the SDK.
 */
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { items, OAJobBusyError } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { createWebhookHandler, getMessageText, type WebhookEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { asMessage } from '../webhook/support.js';
import { mockServerFixture } from './support.js';

const fixture = mockServerFixture();
const media = (name: string) => new URL(`../fixtures/media/${name}`, import.meta.url);

async function get(mock: MockServer, path: string, headers: Record<string, string> = {}) {
  const res = await request(`${mock.url}${path}`, { headers });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

async function control(mock: MockServer, path: string, body: unknown = {}, type = 'application/json') {
  const res = await request(`${mock.url}/_inbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': type },
    body: JSON.stringify(body),
  });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

const state = async (mock: MockServer) => JSON.parse((await get(mock, '/_inbox/state')).bytes.toString());

describe('the web inbox over HTTP', () => {
  it('GET / is an HTML page that loads nothing from elsewhere; it is not one of the recorded requests', async () => {
    const mock = await fixture.start();
    const page = await get(mock, '/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'none'; connect-src 'self'/);
    const html = page.bytes.toString();
    expect(html).toMatch(/^<!doctype html>/);
    // No stylesheet, script or image from anywhere: everything is inline.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)="(?!data:)/);
    expect((await get(mock, '/favicon.ico')).status).toBe(204);
    expect(mock.requests).toEqual([]);
  });

  it('serves the uploaded bytes of images, audio and video from the fake, with byte ranges', async () => {
    const mock = await fixture.start({ transcodeMs: 1 });
    const client = fixture.connect(mock);
    const image = await client.uploadImage(media('sample.png'));
    const audio = await client.uploadAudio(media('sample.mp3'));
    const { ticket_id } = await client.uploadVideo(media('sample.webm'));
    await client.broadcast({
      target: 'single',
      user_ids: ['u1'],
      items: [items.image(image.url), items.audio(audio), items.image('https://cdn.example.com/a.png')],
    });
    await client.sendVideo({ user_id: 'u1', ticket_id });
    const [img, sound, outside, video] = (await state(mock)).conversations.u1.map(
      (entry: { item: Record<string, string> }) => entry.item,
    );
    expect(outside).toMatchObject({ externalUrl: 'https://cdn.example.com/a.png' });
    expect(outside.src).toBeUndefined();
    expect(video).toMatchObject({ type: 'video', transcode: 'finished' });
    for (const [item, file, type] of [
      [img, 'sample.png', 'image/png'],
      [sound, 'sample.mp3', 'audio/mpeg'],
      [video, 'sample.webm', 'video/webm'],
    ] as const) {
      expect(item.src).toMatch(/^\/_inbox\/media\/\d+$/);
      const served = await get(mock, item.src);
      expect(served.headers['content-type']).toBe(type);
      expect(served.bytes.equals(readFileSync(media(file)))).toBe(true);
    }
    const part = await get(mock, video.src, { range: 'bytes=4-9' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 4-9/${readFileSync(media('sample.webm')).length}`);
    expect(part.bytes.equals(readFileSync(media('sample.webm')).subarray(4, 10))).toBe(true);
    expect((await get(mock, '/_inbox/media/99')).status).toBe(404);
  });

  it('shows a video still converting as such', async () => {
    const mock = await fixture.start({ transcodeMs: 60_000 });
    const client = fixture.connect(mock);
    const { ticket_id } = await client.uploadVideo(media('sample.webm'));
    await client.broadcast(
      { target: 'single', user_ids: ['u1'], items: [items.video(ticket_id)] },
      { waitForTranscode: false },
    );
    const shown = await state(mock);
    expect(shown.converting).toBe(true);
    expect(shown.conversations.u1[0]).toMatchObject({
      item: { transcode: 'converting' },
      failure: 'Video is in convert status',
    });
  });

  it('never lets a secret or token reach the page: bodies, queries and message text are cleaned', async () => {
    const secret = 'a-secret-only-this-test-knows';
    const mock = await fixture.start({ apiSecret: secret });
    const client = fixture.connect(mock);
    await client.sendText({ user_id: 'u1', msg: `pasted by mistake: ${secret}` });
    await client.refreshToken();
    const pair = mock.issueTokenPair();
    await request(`${mock.url}/uploads/x?access_token=${pair.access_token}&size=2`);
    const text = (await get(mock, '/_inbox/state')).bytes.toString();
    const tokens = mock.requests.flatMap((r) => [
      r.headers.authorization?.slice(7),
      (r.body as { refresh_token?: string })?.refresh_token,
    ]);
    for (const hidden of [secret, pair.access_token, ...tokens.filter((t): t is string => Boolean(t))]) {
      expect(text).not.toContain(hidden);
    }
    const shown = JSON.parse(text);
    expect(shown.timeline.map((r: { kind: string }) => r.kind)).toEqual(['login', 'send', 'refresh', 'file']);
    expect(shown.timeline[0].body).toBe('{\n "api_key": "[hidden]",\n "api_secret": "[hidden]"\n}');
    expect(shown.timeline[3].query).toBe('?access_token=%5Bhidden%5D&size=2');
    expect(shown.conversations.u1[0].item.msg).toBe('pasted by mistake: [hidden]');
  });

  it('posts a reply as a user to the webhook (option or page) and keeps the answer', async () => {
    const events: WebhookEvent[] = [];
    const receiver = await listen(createWebhookHandler({ onEvent: (event) => void events.push(event) }));
    try {
      const mock = await fixture.start({ webhookUrl: `${receiver.url}/hook` });
      const reply = await control(mock, 'reply', { user_id: 'user_9', kind: 'text', text: 'Hi there' });
      expect(reply).toMatchObject({ status: 200, body: { user_id: 'user_9', kind: 'text', status: 200 } });
      expect(asMessage(events[0]).data.From_Account).toBe('user_9');
      expect(getMessageText(events[0] as WebhookEvent)).toBe('Hi there');
      await control(mock, 'reply', { user_id: 'user_9', kind: 'audio' });
      expect(asMessage(events[1]).data.MsgBody[0]?.MsgType).toBe('TIMSoundElem');
      expect((await state(mock)).conversations.user_9.map((e: { from: string }) => e.from)).toEqual([
        'user',
        'user',
      ]);

      expect(await control(mock, 'webhook', { url: 'ftp://nope' })).toMatchObject({ status: 400 });
      expect(await control(mock, 'webhook', { url: 'http://127.0.0.1:9/closed' })).toMatchObject({
        status: 200,
      });
      const failed = await control(mock, 'reply', { user_id: 'user_9', text: 'lost' });
      expect(failed.body).toMatchObject({ error: expect.any(String) });
      expect(failed.body.status).toBeUndefined();
      expect(await control(mock, 'reply', { user_id: 'user_9', text: '' })).toMatchObject({ status: 400 });
      // A form posted by another site is refused: JSON needs a CORS preflight that is never granted.
      expect(await control(mock, 'reply', {}, 'text/plain')).toMatchObject({ status: 415 });
      expect(events).toHaveLength(2);
      await control(mock, 'reset');
      expect((await state(mock)).users).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it('switches on faults and expires tokens for the SDK; the timeline marks the retries', async () => {
    const mock = await fixture.start();
    const client = fixture.connect(mock);
    await client.sendText({ user_id: 'u1', msg: 'first' });
    expect(await control(mock, 'faults', { kind: 'job-busy', times: 1 })).toMatchObject({ status: 200 });
    expect(await control(mock, 'faults', { kind: 'nope' })).toMatchObject({ status: 400 });
    expect(mock.faults.map((f) => f.fault)).toEqual([
      { kind: 'error', status: 400, code: 'JOB_BUSY', info: 'A broadcast job is currently in progress' },
    ]);
    const busy = client.broadcast({ target: 'all', items: [items.text('x')] }, { timeoutMs: 100 });
    await expect(busy).rejects.toBeInstanceOf(OAJobBusyError);

    await control(mock, 'faults', { kind: 'delay', delayMs: 50, times: 'every' });
    await control(mock, 'faults', { kind: 'error', status: 502 });
    expect((await state(mock)).faults).toEqual([
      { kind: 'delay', detail: '50 ms', remaining: null },
      { kind: 'error', detail: '502', remaining: 1 },
    ]);
    await control(mock, 'faults/clear');
    expect(mock.faults).toEqual([]);

    await control(mock, 'tokens/expire');
    await client.sendText({ user_id: 'u1', msg: 'second' });
    const rows = (await state(mock)).timeline.slice(-3);
    expect(rows.map((r: Record<string, unknown>) => [r.kind, r.status, r.code, r.retryOf])).toEqual([
      ['send', 401, 'UNAUTHORIZED', undefined],
      ['refresh', 201, undefined, undefined],
      ['send', 201, undefined, rows[0].n],
    ]);
  });

  it('keeps the newest 500 requests in the timeline and says how many are left out', async () => {
    const mock = await fixture.start();
    for (let i = 0; i < 503; i++) await (await request(`${mock.url}/uploads/${i}.png`)).body.dump();
    const { timeline, timelineOmitted } = await state(mock);
    expect(timelineOmitted).toBe(3);
    expect(timeline.map((r: { n: number }) => r.n)).toEqual(Array.from({ length: 500 }, (_, i) => i + 3));
    expect(timeline[0]).toMatchObject({
      path: '/uploads/3.png',
      status: 404,
      code: 'NOT_FOUND',
      kind: 'file',
    });
  });

  it('pushes the state to open pages as server-sent events when something changes', async () => {
    const mock = await fixture.start();
    const res = await request(`${mock.url}/_inbox/events`, { signal: AbortSignal.timeout(10_000) });
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const frames: Record<string, unknown>[] = [];
    const reading = (async () => {
      let buffer = '';
      for await (const chunk of res.body) {
        buffer += chunk.toString();
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const data = /^data: (.*)$/m.exec(buffer.slice(0, end))?.[1];
          if (data) frames.push(JSON.parse(data));
          buffer = buffer.slice(end + 2);
        }
      }
    })().catch(() => {});
    await expect.poll(() => frames.length, { timeout: 5000 }).toBe(1);
    await fixture.connect(mock).sendText({ user_id: 'u7', msg: 'live' });
    await expect
      .poll(() => (frames.at(-1)?.users as unknown[] | undefined)?.length, { timeout: 5000 })
      .toBe(1);
    await mock.close();
    await reading;
  });
});
