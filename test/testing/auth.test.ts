import { describe, expect, it } from 'vitest';
import { OAClient, OAUnauthorizedError } from '../../src/index.js';
import { TEST_API_KEY, TEST_API_SECRET } from '../../src/testing/index.js';
import { API, manualClock, mockServerFixture, post, TIMESTAMP } from './support.js';

const { start } = mockServerFixture();

const claimsOf = (jwt: string) =>
  JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, number>;

describe('tokens (endpoints 1 and 2)', () => {
  it('issues a signed HS256 JWT with iat and exp, and the spec envelope', async () => {
    const { url } = await start();
    const res = await post(url, '/auth/token', { api_key: TEST_API_KEY, api_secret: TEST_API_SECRET });
    expect(res.status).toBe(201);
    const { data } = res.body as { data: Record<string, string> };
    expect(data).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: '1h',
    });
    const [header, , signature] = (data.access_token ?? '').split('.');
    expect(JSON.parse(Buffer.from(header ?? '', 'base64url').toString())).toEqual({
      alg: 'HS256',
      typ: 'JWT',
    });
    const claims = claimsOf(data.access_token ?? '');
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(Math.abs(claims.iat! - Date.now() / 1000)).toBeLessThan(5);
    // Tampering with the claims breaks the signature.
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...claims, exp: claims.exp! + 1 })).toString('base64url')}.${signature}`;
    const refused = await post(
      url,
      '/webhook/broadcast-message',
      { user_id: 'u', msg: 'x' },
      { token: forged },
    );
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({ data: { code: 'UNAUTHORIZED', info: 'Invalid token' } });
  });

  it('derives expires_in from tokenLifetimeMs', async () => {
    const { url } = await start({ tokenLifetimeMs: 15 * 60_000 });
    const res = await post(url, '/auth/token', { api_key: TEST_API_KEY, api_secret: TEST_API_SECRET });
    expect((res.body as { data: { expires_in: string } }).data.expires_in).toBe('15m');
  });

  it('refuses wrong credentials with 401 and a missing field with 400, in the data layout', async () => {
    const { url } = await start({ apiKey: 'k1', apiSecret: 's1' });
    const wrong = await post(url, '/auth/token', { api_key: 'k1', api_secret: 'nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body).toEqual({
      statusCode: 401,
      data: { statusCode: 401, code: 'UNAUTHORIZED', info: expect.any(String) },
      timestamp: expect.stringMatching(TIMESTAMP),
      path: `${API}/auth/token`,
    });
    const missing = await post(url, '/auth/token', { api_key: 'k1' });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      data: { code: 'BAD_REQUEST', info: 'api_secret should not be empty' },
    });
  });

  it('answers 401 to a missing, malformed or expired bearer token', async () => {
    const clock = manualClock();
    const fake = await start({ tokenLifetimeMs: 1000, now: clock.now });
    const send = (token?: string) =>
      post(fake.url, '/webhook/broadcast-message', { user_id: 'u1', msg: 'hi' }, token ? { token } : {});
    expect((await send()).status).toBe(401);
    expect((await send('not-a-jwt')).status).toBe(401);
    const { access_token } = fake.issueTokenPair();
    expect((await send(access_token)).status).toBe(201);
    clock.advance(999);
    expect((await send(access_token)).status).toBe(201);
    clock.advance(1);
    const expired = await send(access_token);
    expect(expired.status).toBe(401);
    expect(expired.body).toMatchObject({
      statusCode: 401,
      data: { code: 'UNAUTHORIZED', info: 'Token expired' },
    });
    expect(fake.deliveries).toHaveLength(2);
  });

  it('expires a short-lived token in real time', async () => {
    const fake = await start({ tokenLifetimeMs: 300 });
    const { access_token } = fake.issueTokenPair();
    const claims = claimsOf(access_token);
    expect(claims.exp! - claims.iat!).toBeCloseTo(0.3, 5);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const res = await post(
      fake.url,
      '/webhook/broadcast-message',
      { user_id: 'u', msg: 'x' },
      { token: access_token },
    );
    expect(res.status).toBe(401);
  });

  it('rotates refresh tokens: a used, unknown or expired one is refused with 401', async () => {
    const clock = manualClock();
    const fake = await start({ now: clock.now, refreshTokenLifetimeMs: 10_000 });
    const first = fake.issueTokenPair();
    const refreshed = await post(fake.url, '/auth/refresh-token', { refresh_token: first.refresh_token });
    expect(refreshed.status).toBe(201);
    const second = (refreshed.body as { data: { refresh_token: string; access_token: string } }).data;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const reused = await post(fake.url, '/auth/refresh-token', { refresh_token: first.refresh_token });
    expect(reused.status).toBe(401);
    expect(reused.body).toMatchObject({ data: { code: 'UNAUTHORIZED' } });
    expect((await post(fake.url, '/auth/refresh-token', { refresh_token: 'unknown' })).status).toBe(401);
    clock.advance(10_000);
    expect(
      (await post(fake.url, '/auth/refresh-token', { refresh_token: second.refresh_token })).status,
    ).toBe(401);
  });

  it('keeps the refresh token when rotation is off', async () => {
    const fake = await start({ rotateRefreshTokens: false });
    const { refresh_token } = fake.issueTokenPair();
    for (let i = 0; i < 2; i++) {
      const res = await post(fake.url, '/auth/refresh-token', { refresh_token });
      expect((res.body as { data: { refresh_token: string } }).data.refresh_token).toBe(refresh_token);
    }
  });

  it('revokeTokens() makes every issued token invalid', async () => {
    const fake = await start();
    const pair = fake.issueTokenPair();
    fake.revokeTokens();
    const send = await post(
      fake.url,
      '/webhook/broadcast-message',
      { user_id: 'u', msg: 'x' },
      { token: pair.access_token },
    );
    expect(send.status).toBe(401);
    expect((await post(fake.url, '/auth/refresh-token', { refresh_token: pair.refresh_token })).status).toBe(
      401,
    );
  });

  it("drives the SDK's token handling: a 401 after expiry is renewed and the send replayed once", async () => {
    const clock = manualClock(Date.now());
    const fake = await start({ now: clock.now });
    const client = new OAClient({ baseUrl: fake.url, apiKey: fake.apiKey, apiSecret: fake.apiSecret });
    try {
      await client.sendText({ user_id: 'u1', msg: 'one' });
      clock.advance(2 * 3_600_000); // the server's clock moves on; the client's does not
      await client.sendText({ user_id: 'u1', msg: 'two' });
      const calls = fake.requests.map((r) => `${r.path.slice(API.length)} ${r.status}`);
      expect(calls).toEqual([
        '/auth/token 201',
        '/webhook/broadcast-message 201',
        '/webhook/broadcast-message 401',
        '/auth/refresh-token 201',
        '/webhook/broadcast-message 201',
      ]);
      expect(fake.deliveries.map((d) => d.items[0]?.msg)).toEqual(['one', 'two']);
    } finally {
      await client.close();
    }
  });

  it('the SDK reports wrong credentials as OAUnauthorizedError', async () => {
    const fake = await start();
    const client = new OAClient({ baseUrl: fake.url, apiKey: fake.apiKey, apiSecret: 'wrong-secret' });
    try {
      await expect(client.generateToken()).rejects.toBeInstanceOf(OAUnauthorizedError);
    } finally {
      await client.close();
    }
  });

  it('expireAccessTokens(): issued access tokens answer 401 Token expired, refresh tokens still work', async () => {
    const fake = await start();
    const sendWith = (token: string) =>
      post(fake.url, '/webhook/broadcast-message', { user_id: 'u', msg: 'x' }, { token });
    const before = fake.issueTokenPair();
    fake.expireAccessTokens();
    expect(await sendWith(before.access_token)).toMatchObject({
      status: 401,
      body: { data: { code: 'UNAUTHORIZED', info: 'Token expired' } },
    });
    const renewed = await post(fake.url, '/auth/refresh-token', { refresh_token: before.refresh_token });
    expect(renewed.status).toBe(201);
    expect(
      (await sendWith((renewed.body as { data: { access_token: string } }).data.access_token)).status,
    ).toBe(201);
  });
});
