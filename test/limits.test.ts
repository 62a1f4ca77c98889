import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { OAConnectionError, OATimeoutError } from '../src/index.js';
import type { MockServer } from '../src/testing/index.js';
import { mockServerFixture } from './testing/support.js';

const PNG = readFileSync(new URL('./fixtures/media/sample.png', import.meta.url));
const WINDOW = { general: { max: 20, windowMs: 2000 }, upload: { max: 4, windowMs: 2000 } };

const fixture = mockServerFixture();

/** A fake server enforcing {@link WINDOW} in `mode`, and a client with the same limits. */
async function start(mode: 'sliding' | 'fixed') {
  const mock = await fixture.start({ rateLimit: { ...WINDOW, mode }, transcodeMs: 0 });
  // Each upload of the same bytes goes out (no reuse of the first answer): the uploads are what is measured.
  return { mock, client: fixture.connect(mock, { rateLimit: WINDOW, reuseUploads: false }) };
}

const count429 = (server: MockServer) => server.requests.filter((r) => r.status === 429).length;

/** The least time `n` requests can take under `max` per `windowMs`: the last burst starts then. */
const idealMs = (n: number, { max, windowMs }: { max: number; windowMs: number }) =>
  (Math.ceil(n / max) - 1) * windowMs;

describe.each(['sliding', 'fixed'] as const)('against a %s-window server', (mode) => {
  // Tried once more when it fails: a stall of a loaded 2-core machine (CI's, running the suite) once
  // pushed one burst into the next window (8.2 s against the 7.8 s bound). A limiter that loses a window
  // loses it in both tries.
  it('60 concurrent sends and 12 concurrent uploads: no 429, close to the ideal time', {
    retry: 1,
  }, async () => {
    const { mock, client } = await start(mode);
    const started = performance.now();
    const sends = Array.from({ length: 60 }, (_, i) => client.sendText({ user_id: `u${i}`, msg: `m${i}` }));
    const uploads = Array.from({ length: 12 }, (_, i) =>
      client.uploadImage({ data: PNG, filename: `p${i}.png` }),
    );
    const results = await Promise.all([...sends, ...uploads]);
    const elapsed = performance.now() - started;

    expect(results).toHaveLength(72);
    expect(count429(mock)).toBe(0);
    expect(mock.deliveries).toHaveLength(60);
    expect(mock.uploads).toHaveLength(12);
    // 73 requests (a login, 60 sends, 12 uploads) at 20 per 2 s, uploads also at 4 per 2 s.
    const ideal = Math.max(idealMs(73, WINDOW.general), idealMs(12, WINDOW.upload));
    expect(elapsed).toBeGreaterThanOrEqual(ideal);
    expect(elapsed).toBeLessThanOrEqual(1.3 * ideal);
  });
});

describe('another client using part of the allowance', () => {
  it('the 429s it causes are waited out: every call succeeds, each message delivered once', async () => {
    const { mock, client } = await start('sliding');
    // The other client: 10 token calls now, 5 more a second later, with the same key.
    const other = async (n: number) => {
      for (let i = 0; i < n; i++) {
        const res = await request(`${mock.url}/api/v2/public/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ api_key: mock.apiKey, api_secret: mock.apiSecret }),
        });
        await res.body.text();
      }
    };
    await other(10);
    const later = new Promise((resolve) => setTimeout(resolve, 1000)).then(() => other(5));
    const retries: string[] = [];
    client.on('retry', (event) => retries.push(event.reason));
    const msgs = Array.from({ length: 30 }, (_, i) => `m${i}`);
    const results = await Promise.all(msgs.map((msg) => client.sendText({ user_id: 'u1', msg })));
    await later;

    expect(results.every((r) => r === 'success')).toBe(true);
    expect(count429(mock)).toBeGreaterThan(0);
    expect(retries.length).toBeGreaterThan(0);
    expect(new Set(retries)).toEqual(new Set(['rate_limited']));
    const delivered = mock.deliveries.map((d) => d.items[0]?.msg);
    expect(delivered.sort()).toEqual([...msgs].sort());
  });
});

describe('a reset after the server processed the request', () => {
  it('a send: one delivery, OAConnectionError with deliveryUnknown', async () => {
    const { mock, client } = await start('sliding');
    mock.injectFault('reset-after-processing', { path: '/webhook/broadcast-message' });
    const error = await client.sendText({ user_id: 'u1', msg: 'hello' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error).toMatchObject({ deliveryUnknown: true });
    expect(mock.deliveries).toHaveLength(1);
  });

  it('an upload is retried and succeeds', async () => {
    const { mock, client } = await start('sliding');
    mock.injectFault('reset-after-processing', { path: '/upload/image' });
    const result = await client.uploadImage({ data: PNG, filename: 'p.png' });
    expect(result.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    expect(mock.requests.filter((r) => r.path.endsWith('/upload/image'))).toHaveLength(2);
  });

  it('an upload from a one-shot stream is not retried, and the error says why', async () => {
    const { mock, client } = await start('sliding');
    mock.injectFault('reset-after-processing', { path: '/upload/image' });
    const error = await client.uploadImage(Readable.from([PNG])).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAConnectionError);
    expect((error as Error).message).toMatch(
      /not retried: the file came from a stream, which cannot be read twice/,
    );
    expect(mock.requests.filter((r) => r.path.endsWith('/upload/image'))).toHaveLength(1);
  });

  it('a token call is retried and succeeds', async () => {
    const { mock, client } = await start('sliding');
    mock.injectFault('reset-after-processing', { path: '/auth/token' });
    await expect(client.sendText({ user_id: 'u1', msg: 'hello' })).resolves.toBe('success');
    expect(mock.requests.filter((r) => r.path.endsWith('/auth/token'))).toHaveLength(2);
    expect(mock.deliveries).toHaveLength(1);
  });
});

describe('a server that never answers', () => {
  it('OATimeoutError after timeoutMs; a send is not retried', async () => {
    const { mock, client } = await start('sliding');
    mock.injectFault('hang', { path: '/webhook/broadcast-message' });
    const error = await client
      .sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OATimeoutError);
    expect(error).toMatchObject({ deliveryUnknown: true });
    expect(mock.requests.filter((r) => r.path.endsWith('/broadcast-message'))).toHaveLength(1);
  });
});
