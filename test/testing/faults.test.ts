import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { OAClient, OAConnectionError, OAInternalServerError, OATimeoutError } from '../../src/index.js';
import type { MockServer, MockServerOptions } from '../../src/testing/index.js';
import { API, mockServerFixture, post, TIMESTAMP } from './support.js';

const fixture = mockServerFixture();
const start = async (options: MockServerOptions = {}) => {
  const fake = await fixture.start(options);
  return { fake, token: fake.issueTokenPair().access_token };
};
const SEND = '/webhook/broadcast-message';
const send = (fake: MockServer, token: string, msg = 'hi') =>
  post(fake.url, SEND, { user_id: 'u1', msg }, { token });
const client = (fake: MockServer, options = {}) =>
  new OAClient({ baseUrl: fake.url, apiKey: fake.apiKey, apiSecret: fake.apiSecret, ...options });

describe('fault injection', () => {
  it('error: a 500 INTERNAL_SERVER_ERROR in the spec layout, not processed, `times` of them', async () => {
    const { fake, token } = await start();
    const injected = fake.injectFault('error', { times: 2 });
    const first = await send(fake, token);
    expect(first.status).toBe(500);
    expect(first.body).toEqual({
      statusCode: 500,
      data: { statusCode: 500, code: 'INTERNAL_SERVER_ERROR', info: expect.any(String) },
      timestamp: expect.stringMatching(TIMESTAMP),
      path: `${API}${SEND}`,
    });
    expect(injected.remaining).toBe(1);
    expect((await send(fake, token)).status).toBe(500);
    expect((await send(fake, token)).status).toBe(201);
    expect(fake.deliveries).toHaveLength(1);
    expect(fake.requests.map((r) => r.fault)).toEqual(['error', 'error', undefined]);
  });

  it('error: any status, an HTML body, only on the given path', async () => {
    const { fake, token } = await start();
    fake.injectFault(503, { path: '/message/broadcast-message' });
    fake.injectFault(
      { kind: 'error', status: 502, body: '<html><title>Bad Gateway</title></html>' },
      { path: /image-link$/ },
    );
    expect((await send(fake, token)).status).toBe(201);
    const mass = await post(
      fake.url,
      '/message/broadcast-message',
      { target: 'all', items: [{ type: 'message', msg: 'x' }] },
      { token },
    );
    expect(mass.status).toBe(503);
    expect(mass.body).toMatchObject({ data: { code: 'SERVICE_UNAVAILABLE' } });
    const image = await post(
      fake.url,
      '/webhook/broadcast-image-link',
      { user_id: 'u', image_url: 'https://a.test/i.png' },
      { token },
    );
    expect(image).toMatchObject({ status: 502, body: '<html><title>Bad Gateway</title></html>' });
    expect(image.headers['content-type']).toMatch(/text\/html/);
  });

  it('faults skip the auth endpoints unless their path is given', async () => {
    const { fake } = await start();
    fake.injectFault('error');
    const c = client(fake, { maxRetries: 0 });
    try {
      const error = await c.sendText({ user_id: 'u1', msg: 'x' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAInternalServerError);
      expect((error as OAInternalServerError).deliveryUnknown).toBe(true);
      expect(fake.requests.map((r) => r.status)).toEqual([201, 500]);
    } finally {
      await c.close();
    }
  });

  it('rate-limit: a 429 in the spec layout, with Retry-After when given', async () => {
    const { fake, token } = await start();
    fake.injectFault({ kind: 'rate-limit', retryAfterSeconds: 3 });
    const res = await send(fake, token);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('3');
    expect(res.body).toEqual({
      statusCode: 429,
      data: expect.any(String),
      timestamp: expect.stringMatching(TIMESTAMP),
      path: `${API}${SEND}`,
    });
    expect(fake.deliveries).toEqual([]);
  });

  it('reset-after-processing: delivered once, then the connection is reset; the SDK does not resend', async () => {
    const { fake, token } = await start();
    fake.injectFault('reset-after-processing');
    await expect(send(fake, token, 'raw')).rejects.toThrow();
    expect(fake.deliveries.map((d) => d.items[0]?.msg)).toEqual(['raw']);
    expect(fake.requests[0]).toMatchObject({
      status: 201,
      outcome: 'reset',
      fault: 'reset-after-processing',
    });

    fake.injectFault('reset-after-processing');
    const c = client(fake);
    try {
      const error = await c.sendText({ user_id: 'u1', msg: 'sdk' }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as OAConnectionError).deliveryUnknown).toBe(true);
    } finally {
      await c.close();
    }
    expect(fake.deliveries.map((d) => d.items[0]?.msg)).toEqual(['raw', 'sdk']);
  });

  it('reset-before-processing: nothing delivered', async () => {
    const { fake, token } = await start();
    fake.injectFault('reset-before-processing');
    await expect(send(fake, token)).rejects.toThrow();
    expect(fake.deliveries).toEqual([]);
    expect(fake.requests[0]).toMatchObject({ status: undefined, outcome: 'reset' });
    expect((await send(fake, token)).status).toBe(201);
  });

  it('hang: no answer until the client gives up', async () => {
    const { fake } = await start();
    fake.injectFault('hang');
    const c = client(fake, { maxRetries: 0 });
    try {
      const started = Date.now();
      const error = await c
        .sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 300 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OATimeoutError);
      expect(Date.now() - started).toBeGreaterThanOrEqual(250);
      expect(fake.requests.at(-1)).toMatchObject({ outcome: 'hang', status: undefined });
      expect(fake.deliveries).toEqual([]);
    } finally {
      await c.close();
    }
  });

  it('hang: close() drops the hung connection and returns promptly', async () => {
    const { fake, token } = await start();
    fake.injectFault('hang', { times: 3 });
    const pending = Promise.allSettled([send(fake, token), send(fake, token), send(fake, token)]);
    while (fake.requests.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    const started = Date.now();
    await fake.close();
    expect(Date.now() - started).toBeLessThan(2000);
    expect((await pending).map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });

  it('clearFaults() and remove() take faults back', async () => {
    const { fake, token } = await start();
    const injected = fake.injectFault('hang', { times: Number.POSITIVE_INFINITY });
    injected.remove();
    fake.injectFault('error', { times: 5 });
    fake.clearFaults();
    expect((await send(fake, token)).status).toBe(201);
  });

  it('reset() clears the records and state but keeps tokens valid', async () => {
    const { fake, token } = await start({ broadcastJobMs: 60_000 });
    const mass = () =>
      post(
        fake.url,
        '/message/broadcast-message',
        { target: 'all', items: [{ type: 'message', msg: 'x' }] },
        { token },
      );
    expect((await mass()).status).toBe(201);
    expect((await mass()).status).toBe(400);
    fake.injectFault('error');
    fake.reset();
    expect(fake.requests).toEqual([]);
    expect(fake.deliveries).toEqual([]);
    expect((await mass()).status).toBe(201);
  });

  it('the files it serves are not subject to faults, auth or limits', async () => {
    const { fake } = await start({ rateLimit: { general: { max: 1, windowMs: 60_000 } } });
    fake.injectFault('hang', { times: Number.POSITIVE_INFINITY });
    const res = await request(`${fake.url}/uploads/images/none.png`);
    await res.body.dump();
    expect(res.statusCode).toBe(404);
  });

  it('delay: processed and answered after the delay; a reset or close cuts the wait short', async () => {
    const { fake, token } = await start();
    const slow = fake.injectFault({ kind: 'delay', delayMs: 150 }, { path: SEND });
    expect(fake.faults).toEqual([slow]);
    expect(slow.options).toEqual({ path: SEND });
    const answered = await send(fake, token, 'slow');
    expect(answered.status).toBe(201);
    expect(fake.requests[0]).toMatchObject({ fault: 'delay', status: 201, outcome: 'answered' });
    expect(fake.requests[0]?.durationMs).toBeGreaterThan(100); // it did wait
    expect(fake.deliveries.map((d) => d.items[0]?.msg)).toEqual(['slow']);

    fake.injectFault({ kind: 'delay', delayMs: 600_000 });
    const waiting = send(fake, token, 'released');
    await expect.poll(() => fake.requests.length, { timeout: 5000 }).toBe(2);
    fake.releaseHungRequests();
    expect((await waiting).status).toBe(201);
  });

  it('records the code of every error answer, in either layout', async () => {
    const { fake, token } = await start();
    fake.injectFault({ kind: 'error', status: 400, code: 'JOB_BUSY' });
    fake.injectFault('rate-limit');
    fake.injectFault({ kind: 'error', status: 502, body: '<html>Bad Gateway</html>' });
    for (let i = 0; i < 4; i++) await send(fake, token);
    expect(fake.requests.map((r) => [r.status, r.code])).toEqual([
      [400, 'JOB_BUSY'],
      [429, 'TOO_MANY_REQUESTS'],
      [502, undefined],
      [201, undefined],
    ]);
  });
});
