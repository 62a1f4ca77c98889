// A token answer without a usable refresh token: the client keeps the access token and, when it needs
// a new one, logs in again instead of calling the refresh endpoint with nothing.
import { describe, expect, it } from 'vitest';
import { OAValidationError } from '../../src/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { API, clientFixture, rejection } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';
import { makeJwt } from '../helpers/tokens.js';

const { setup, hits, sends } = clientFixture();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unauthorized = {
  statusCode: 401,
  data: { statusCode: 401, code: 'UNAUTHORIZED', info: 'Unauthorized' },
};

/** A JWT issued now that lives `seconds`; `n` makes each one distinct. */
function jwt(n: number, seconds: number): string {
  const iat = Math.floor(Date.now() / 1000);
  return makeJwt({ sub: 'provider-1', n, iat, exp: iat + seconds });
}

/** The refresh token fields an answer may carry that give the client nothing to refresh with. */
const NO_REFRESH_TOKEN: [string, Record<string, unknown>][] = [
  ['missing', {}],
  ['null', { refresh_token: null }],
  ['empty', { refresh_token: '' }],
  ['a number', { refresh_token: 123456789 }],
];

/**
 * A server whose logins answer `refreshField` in place of a refresh token, whose refreshes answer with
 * one (`refresh-n-abcdef`) unless `refreshAnswersWithout`, and that refuses the access tokens in
 * `refused` (by number).
 */
async function serve(
  refreshField: Record<string, unknown>,
  opts: { lifetimeSeconds?: number; refused?: Set<number>; refreshAnswersWithout?: boolean } = {},
) {
  let issued = 0;
  const accepted = new Map<string, number>();
  const pair = (refresh: (n: number) => Record<string, unknown>) => {
    issued++;
    const access_token = jwt(issued, opts.lifetimeSeconds ?? 3600);
    accepted.set(access_token, issued);
    return { access_token, token_type: 'Bearer', expires_in: '1h', ...refresh(issued) };
  };
  return setup((req, res) => {
    if (req.url === `${API}/auth/token`) return json(res, 201, { data: pair(() => refreshField) });
    if (req.url === `${API}/auth/refresh-token`) {
      const refresh = opts.refreshAnswersWithout
        ? () => ({})
        : (n: number) => ({ refresh_token: `refresh-${n}-abcdef` });
      return json(res, 201, { data: pair(refresh) });
    }
    const n = accepted.get(req.headers.authorization?.replace(/^Bearer /, '') ?? '');
    if (n === undefined || opts.refused?.has(n)) return json(res, 401, unauthorized);
    json(res, 201, { data: 'success' });
  });
}

describe.each(NO_REFRESH_TOKEN)('a login answer whose refresh token is %s', (_name, refreshField) => {
  it('comes back from generateToken() as "", and refreshToken() then sends nothing', async () => {
    const { client } = await serve(refreshField);
    const pair = await client.generateToken();
    expect(pair.refresh_token).toBe('');
    expect(pair.token_type).toBe('Bearer');
    const error = await rejection(client.refreshToken());
    expect(error).toBeInstanceOf(OAValidationError);
    expect(error.message).toMatch(/no refresh token/);
    expect(hits('/auth/refresh-token')).toBe(0);
    expect(await client.sendText({ user_id: 'u1', msg: 'x' })).toBe('success');
    expect(sends()[0]?.authorization).toBe(`Bearer ${pair.access_token}`);
  });

  it('is replaced by a login, not a refresh, when a 401 refuses its access token', async () => {
    const { client } = await serve(refreshField, { refused: new Set([1]) });
    const sent = await settleWithin(client.sendText({ user_id: 'u1', msg: 'x' }), 5000);
    expect(sent).toMatchObject({ ok: true, value: 'success' });
    expect([hits('/auth/token'), hits('/auth/refresh-token')]).toEqual([2, 0]);
    expect(sends()).toHaveLength(2);
  });
});

describe('a pair without a refresh token, close to its expiry', () => {
  it('is renewed by a login, with no 401', async () => {
    const { client, server } = await serve({}, { lifetimeSeconds: 2 });
    const send = (msg: string) => settleWithin(client.sendText({ user_id: 'u1', msg }), 5000, msg);
    expect(await send('first')).toMatchObject({ ok: true });
    await sleep(1100);
    expect(await send('second')).toMatchObject({ ok: true });
    expect([hits('/auth/token'), hits('/auth/refresh-token')]).toEqual([2, 0]);
    const [first, second] = sends().map((h) => h.authorization);
    expect(second).not.toBe(first);
    expect(server.hits.every((h) => h.path.includes('/auth/') || h.authorization !== undefined)).toBe(true);
  });

  it('from a refresh answer without one: the refresh token sent is kept (RFC 6749, section 6)', async () => {
    const { client, server } = await serve(
      { refresh_token: 'login-refresh-abcdef' },
      { lifetimeSeconds: 2, refreshAnswersWithout: true },
    );
    const send = (msg: string) => settleWithin(client.sendText({ user_id: 'u1', msg }), 5000, msg);
    expect(await send('first')).toMatchObject({ ok: true });
    await sleep(1100);
    expect(await send('second, after a refresh')).toMatchObject({ ok: true });
    await sleep(1100);
    expect(await send('third, after a second refresh')).toMatchObject({ ok: true });
    const renewals = server.hits.filter((h) => h.path.includes('/auth/'));
    expect(renewals.map((h) => [h.path.replace(`${API}/auth/`, ''), h.body])).toEqual([
      ['token', { api_key: 'key-123456', api_secret: 'secret-abcdef' }],
      ['refresh-token', { refresh_token: 'login-refresh-abcdef' }],
      ['refresh-token', { refresh_token: 'login-refresh-abcdef' }],
    ]);
    expect(new Set(sends().map((h) => h.authorization)).size).toBe(3);
  });
});
