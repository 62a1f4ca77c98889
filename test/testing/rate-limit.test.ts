import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import { slidingWindow } from '../../src/testing/rate-limit.js';
import { API, manualClock, mockServerFixture, PNG_BYTES, post, sleep, TIMESTAMP, upload } from './support.js';

const { start } = mockServerFixture();

const SEND = '/webhook/broadcast-message';
const send = (fake: MockServer, token: string) =>
  post(fake.url, SEND, { user_id: 'u1', msg: 'hi' }, { token });
/** Sends `n` texts one after the other and returns their statuses. */
const statuses = async (fake: MockServer, token: string, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send(fake, token)).status);
  return out;
};

describe('rate limits', () => {
  it("answers 429 past the general limit with the spec's body: data is a plain string", async () => {
    const fake = await start({ rateLimit: { general: { max: 5, windowMs: 60_000 } } });
    const { access_token } = fake.issueTokenPair();
    expect(await statuses(fake, access_token, 6)).toEqual([201, 201, 201, 201, 201, 429]);
    const res = await send(fake, access_token);
    expect(res.status).toBe(429);
    expect(res.body).toEqual({
      statusCode: 429,
      data: expect.stringMatching(/too many requests/i),
      timestamp: expect.stringMatching(TIMESTAMP),
      path: `${API}${SEND}`,
    });
    expect(res.headers['retry-after']).toBeUndefined();
    expect(fake.deliveries).toHaveLength(5);
  });

  it('counts the token endpoints too, and a refused request does not use up the limit', async () => {
    const clock = manualClock();
    const fake = await start({ now: clock.now, rateLimit: { general: { max: 2, windowMs: 1000 } } });
    const login = () => post(fake.url, '/auth/token', { api_key: fake.apiKey, api_secret: fake.apiSecret });
    expect([(await login()).status, (await login()).status, (await login()).status]).toEqual([201, 201, 429]);
    clock.advance(1000);
    expect((await login()).status).toBe(201);
  });

  it('sliding mode: at most max in any span of windowMs', async () => {
    const clock = manualClock();
    const fake = await start({
      now: clock.now,
      rateLimit: { general: { max: 5, windowMs: 500 }, mode: 'sliding' },
    });
    const { access_token } = fake.issueTokenPair();
    expect(await statuses(fake, access_token, 3)).toEqual([201, 201, 201]); // t = 0
    clock.advance(300);
    expect(await statuses(fake, access_token, 3)).toEqual([201, 201, 429]); // t = 300
    clock.advance(200);
    // t = 500: the three of t = 0 have left the window, the two of t = 300 have not.
    expect(await statuses(fake, access_token, 4)).toEqual([201, 201, 201, 429]);
  });

  it('fixed mode: windows start at the first request and reset whole', async () => {
    const clock = manualClock();
    const fake = await start({
      now: clock.now,
      rateLimit: { general: { max: 5, windowMs: 500 }, mode: 'fixed' },
    });
    const { access_token } = fake.issueTokenPair();
    clock.advance(100);
    expect(await statuses(fake, access_token, 3)).toEqual([201, 201, 201]); // window 100..600
    clock.advance(300);
    expect(await statuses(fake, access_token, 3)).toEqual([201, 201, 429]);
    clock.advance(199); // t = 599, still the first window
    expect(await statuses(fake, access_token, 1)).toEqual([429]);
    clock.advance(1); // t = 600: a new window, all 5 free (sliding would free only 3)
    expect(await statuses(fake, access_token, 6)).toEqual([201, 201, 201, 201, 201, 429]);
  });

  for (const mode of ['sliding', 'fixed'] as const) {
    it(`${mode} mode recovers in real time`, async () => {
      const fake = await start({ rateLimit: { general: { max: 5, windowMs: 800 }, mode } });
      const { access_token } = fake.issueTokenPair();
      expect(await statuses(fake, access_token, 6)).toEqual([201, 201, 201, 201, 201, 429]);
      await sleep(1000);
      expect(await statuses(fake, access_token, 1)).toEqual([201]);
    });
  }

  it('limits uploads separately, and an upload counts against the general limit too', async () => {
    const clock = manualClock();
    const fake = await start({
      now: clock.now,
      rateLimit: { general: { max: 4, windowMs: 1000 }, upload: { max: 2, windowMs: 1000 } },
    });
    const image = { bytes: PNG_BYTES, type: 'image/png', filename: 'a.png' };
    const uploads = [];
    for (let i = 0; i < 3; i++) uploads.push((await upload(fake.url, fake, 'image', image)).status);
    expect(uploads).toEqual([201, 201, 429]);
    const { access_token } = fake.issueTokenPair();
    // Two uploads used two of the four general slots.
    expect(await statuses(fake, access_token, 3)).toEqual([201, 201, 429]);
  });

  it('adds Retry-After (seconds until a slot frees) when asked', async () => {
    const clock = manualClock();
    const fake = await start({
      now: clock.now,
      retryAfter: true,
      rateLimit: { general: { max: 1, windowMs: 10_000 } },
    });
    const { access_token } = fake.issueTokenPair();
    await send(fake, access_token);
    clock.advance(2500);
    const res = await send(fake, access_token);
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('8');
  });

  it('rateLimit: false turns both limits off', async () => {
    const fake = await start({ rateLimit: false });
    const { access_token } = fake.issueTokenPair();
    const all = await Promise.all(Array.from({ length: 250 }, () => send(fake, access_token)));
    expect(all.every((r) => r.status === 201)).toBe(true);
  });
});

describe('the sliding window log', () => {
  it('counts a request recorded after a later one (a slow upload) in time order', () => {
    const window = slidingWindow({ max: 2, windowMs: 1000 });
    window.record(500);
    window.record(100);
    // At 1000 both are in the window, and the one of 100 frees its slot first; at 1200 it has left.
    expect(window.blockedForMs(1000)).toBe(100);
    expect(window.blockedForMs(1200)).toBeUndefined();
  });
});
