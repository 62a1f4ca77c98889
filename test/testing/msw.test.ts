import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createFakeOA } from '../../src/testing/index.js';
import { createMswHandlers } from '../../src/testing/msw.js';
import { PNG_BYTES } from './support.js';

const BASE = 'https://oa.test/gateway';
const fake = createFakeOA({ rateLimit: { general: { max: 50, windowMs: 60_000 } } });
const server = setupServer(...createMswHandlers(fake, { baseUrl: BASE }));

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => fake.reset());
afterAll(() => server.close());

const token = () => fake.issueTokenPair().access_token;
const sendText = (msg: string, signal?: AbortSignal) =>
  fetch(`${BASE}/api/v2/public/webhook/broadcast-message`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token()}` },
    body: JSON.stringify({ user_id: 'u1', msg }),
    ...(signal ? { signal } : {}),
  });

describe('createMswHandlers', () => {
  it('answers from the same fake core through fetch', async () => {
    const login = await fetch(`${BASE}/api/v2/public/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: fake.apiKey, api_secret: fake.apiSecret }),
    });
    expect(login.status).toBe(201);
    const { data } = (await login.json()) as { data: { access_token: string; expires_in: string } };
    expect(data.expires_in).toBe('1h');
    const res = await sendText('via msw');
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ data: 'success' });
    expect(fake.deliveries).toMatchObject([{ endpoint: 'sendText', items: [{ msg: 'via msw' }] }]);
    expect(fake.requests.map((r) => r.path)).toEqual([
      '/api/v2/public/auth/token',
      '/api/v2/public/webhook/broadcast-message',
    ]);
    const anonymous = await fetch(`${BASE}/api/v2/public/webhook/broadcast-message`, {
      method: 'POST',
      body: '{}',
    });
    expect(anonymous.status).toBe(401);
  });

  it('uploads a file and serves it under the base URL', async () => {
    const form = new FormData();
    form.append('file', new Blob([PNG_BYTES], { type: 'image/png' }), 'a.png');
    const res = await fetch(`${BASE}/api/v2/public/upload/image`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token()}` },
      body: form,
    });
    expect(res.status).toBe(201);
    const { data } = (await res.json()) as { data: { url: string } };
    expect(data.url.startsWith(`${BASE}/uploads/images/`)).toBe(true);
    const image = await fetch(data.url);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG_BYTES);
  });

  it('maps faults: errors as answers, resets as network errors, hangs that never answer', async () => {
    fake.injectFault(500);
    expect((await sendText('a')).status).toBe(500);

    fake.injectFault('reset-after-processing');
    await expect(sendText('b')).rejects.toThrow(TypeError);
    expect(fake.deliveries.map((d) => d.items[0]?.msg)).toEqual(['b']);

    fake.injectFault('hang');
    await expect(sendText('c', AbortSignal.timeout(200))).rejects.toThrow();
    expect(fake.requests.at(-1)?.outcome).toBe('hang');
  });
});
