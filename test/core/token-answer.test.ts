// Token answers (endpoints 1 and 2) in shapes the spec does not promise: what the client can work
// with is read and filled in; what carries no usable access token is refused.
import { describe, expect, it } from 'vitest';
import { MemoryTokenStore, OAResponseValidationError, type StoredToken } from '../../src/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { API, clientFixture, rejection } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';
import { makeJwt } from '../helpers/tokens.js';

const { setup, hits, sends } = clientFixture();

const HOUR_MS = 3_600_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A JWT issued now that lives `seconds`; `n` makes each one distinct. */
function jwt(n: number, seconds: number): string {
  const iat = Math.floor(Date.now() / 1000);
  return makeJwt({ sub: 'provider-1', n, iat, exp: iat + seconds });
}

/** The fields of a pair the tests shape: `undefined` leaves the field out of the answer. */
type Shape = Record<string, unknown>;

/**
 * Answers both token endpoints with `shape(n)` (the n-th pair issued) and every send with `success`.
 * The client keeps its pairs in a store the test reads, to see the lifetime the client gave each.
 */
async function serve(shape: (n: number) => Shape) {
  const issued: Shape[] = [];
  const store = new MemoryTokenStore();
  const saved: StoredToken[] = [];
  const { client, server } = await setup(
    (req, res) => {
      if (req.url?.startsWith(`${API}/auth/`)) {
        const pair = shape(issued.length + 1);
        issued.push(pair);
        return json(res, 201, { data: pair });
      }
      json(res, 201, { data: 'success' });
    },
    {
      tokenStore: {
        get: (key) => store.get(key),
        set: (key, token) => {
          saved.push(token);
          store.set(key, token);
        },
        delete: (key) => store.delete(key),
      },
    },
  );
  const send = async (msg: string) => {
    const sent = await settleWithin(client.sendText({ user_id: 'u1', msg }), 5000, `send ${msg}`);
    expect(sent).toMatchObject({ ok: true, value: 'success' });
  };
  /** The lifetime the client gave the last pair it kept, in ms. */
  const lifetime = () => {
    const last = saved.at(-1);
    return last ? last.expires_at - last.obtained_at : undefined;
  };
  return { client, server, send, lifetime, issued };
}

const opaque = (n: number) => `opaque-access-token-${n}`;
const refresh = (n: number) => `refresh-token-${n}-abcdef`;

/**
 * Shapes the spec does not promise, each with the `token_type` and `expires_in` the client fills in
 * and the lifetime it gives the pair.
 */
const TOLERATED: {
  name: string;
  answer: (n: number) => Shape;
  token_type: string;
  expires_in: string | number;
  lifetimeMs: number;
}[] = [
  {
    name: 'no token_type and no expires_in, a JWT with iat and exp',
    answer: (n) => ({ access_token: jwt(n, 1800), refresh_token: refresh(n) }),
    token_type: 'Bearer',
    expires_in: 1800,
    lifetimeMs: 1_800_000,
  },
  {
    name: 'token_type and expires_in null',
    answer: (n) => ({
      access_token: jwt(n, 1800),
      refresh_token: refresh(n),
      token_type: null,
      expires_in: null,
    }),
    token_type: 'Bearer',
    expires_in: 1800,
    lifetimeMs: 1_800_000,
  },
  {
    name: 'token_type a number and expires_in an object',
    answer: (n) => ({ access_token: jwt(n, 1800), refresh_token: refresh(n), token_type: 7, expires_in: {} }),
    token_type: 'Bearer',
    expires_in: 1800,
    lifetimeMs: 1_800_000,
  },
  {
    name: 'an expires_in text that says no lifetime',
    answer: (n) => ({
      access_token: jwt(n, 1800),
      refresh_token: refresh(n),
      token_type: 'Bearer',
      expires_in: 'soon',
    }),
    token_type: 'Bearer',
    expires_in: 1800,
    lifetimeMs: 1_800_000,
  },
  {
    name: 'expires_in 0',
    answer: (n) => ({ access_token: jwt(n, 1800), refresh_token: refresh(n), expires_in: 0 }),
    token_type: 'Bearer',
    expires_in: 1800,
    lifetimeMs: 1_800_000,
  },
  {
    name: 'expires_in "3600" (seconds as text), an opaque token',
    answer: (n) => ({ access_token: opaque(n), refresh_token: refresh(n), expires_in: '3600' }),
    token_type: 'Bearer',
    expires_in: '3600',
    lifetimeMs: HOUR_MS,
  },
  {
    name: 'expires_in a number of seconds, an opaque token, a lowercase token_type',
    answer: (n) => ({
      access_token: opaque(n),
      refresh_token: refresh(n),
      token_type: 'bearer',
      expires_in: 900,
    }),
    token_type: 'bearer',
    expires_in: 900,
    lifetimeMs: 900_000,
  },
  {
    name: 'an opaque token and no expires_in',
    answer: (n) => ({ access_token: opaque(n), refresh_token: refresh(n) }),
    token_type: 'Bearer',
    expires_in: '1h',
    lifetimeMs: HOUR_MS,
  },
  {
    name: 'a JWT with exp but no iat, and expires_in null',
    answer: (n) => ({
      access_token: makeJwt({ n, exp: Math.floor(Date.now() / 1000) + 600 }),
      refresh_token: refresh(n),
      expires_in: null,
    }),
    token_type: 'Bearer',
    expires_in: '1h',
    lifetimeMs: HOUR_MS,
  },
];

describe.each(TOLERATED)('a token answer with $name', ({ answer, token_type, expires_in, lifetimeMs }) => {
  it('lets a send go through with its access token', async () => {
    const { server, send, lifetime, issued } = await serve(answer);
    await send('hello');
    const [sent] = sends();
    expect(sent?.authorization).toBe(`Bearer ${issued[0]?.access_token}`);
    expect(sent?.body).toEqual({ user_id: 'u1', msg: 'hello' });
    expect(server.hits.filter((h) => h.path.includes('/auth/')).map((h) => h.path)).toEqual([
      `${API}/auth/token`,
    ]);
    expect(lifetime()).toBe(lifetimeMs);
  });

  it('is returned by generateToken() with token_type and expires_in filled in', async () => {
    const { client, lifetime } = await serve(answer);
    const pair = await client.generateToken();
    expect(pair.token_type).toBe(token_type);
    expect(pair.expires_in).toBe(expires_in);
    expect(pair.refresh_token).toBe(refresh(1));
    expect(pair.access_token.length).toBeGreaterThan(0);
    expect(lifetime()).toBe(lifetimeMs);
    await client.sendText({ user_id: 'u1', msg: 'x' });
    // The pair generateToken() kept is the one the send carries: no second login.
    expect(sends()[0]?.authorization).toBe(`Bearer ${pair.access_token}`);
    expect(hits('/auth/token')).toBe(1);
  });

  it('comes back from refreshToken() filled in the same way', async () => {
    const { client } = await serve(answer);
    await client.generateToken();
    const pair = await client.refreshToken();
    expect(hits('/auth/refresh-token')).toBe(1);
    expect([pair.token_type, pair.expires_in, pair.refresh_token]).toEqual([
      token_type,
      expires_in,
      refresh(2),
    ]);
  });
});

describe('the lifetime of a pair whose answer lacks token_type or expires_in', () => {
  it('is exp - iat of its JWT: renewed once half of a 2 s lifetime is gone, with no 401', async () => {
    const { server, send, lifetime } = await serve((n) => ({
      access_token: jwt(n, 2),
      refresh_token: refresh(n),
      token_type: null,
      expires_in: null,
    }));
    await send('first');
    expect(lifetime()).toBe(2000);
    await send('still fresh');
    expect(hits('/auth/refresh-token')).toBe(0);
    await sleep(1100);
    await send('second');
    expect(hits('/auth/refresh-token')).toBe(1);
    expect(server.hits.find((h) => h.path.endsWith('/refresh-token'))?.body).toEqual({
      refresh_token: refresh(1),
    });
    const [first, , second] = sends().map((h) => h.authorization);
    expect(second).not.toBe(first);
  });

  it('is a usable expires_in for an opaque token: 2 (seconds) renews after 1 s', async () => {
    const { send, lifetime } = await serve((n) => ({
      access_token: opaque(n),
      refresh_token: refresh(n),
      expires_in: 2,
    }));
    await send('first');
    expect(lifetime()).toBe(2000);
    await sleep(1100);
    await send('second');
    expect(hits('/auth/refresh-token')).toBe(1);
    expect(sends().map((h) => h.authorization)).toEqual([`Bearer ${opaque(1)}`, `Bearer ${opaque(2)}`]);
  });

  it('is the documented hour for an opaque token with none: not renewed a second later', async () => {
    const { send, lifetime } = await serve((n) => ({
      access_token: opaque(n),
      refresh_token: refresh(n),
      expires_in: null,
    }));
    await send('first');
    expect(lifetime()).toBe(HOUR_MS);
    await sleep(1100);
    await send('second');
    expect(hits('/auth/token') + hits('/auth/refresh-token')).toBe(1);
  });
});

/** Answers with nothing the client could put in an `Authorization` header. */
const REFUSED: [string, Shape][] = [
  ['no access_token', { refresh_token: refresh(1), token_type: 'Bearer', expires_in: '1h' }],
  [
    'an empty access_token',
    { access_token: '', refresh_token: refresh(1), token_type: 'Bearer', expires_in: '1h' },
  ],
  ['an access_token that is a number', { access_token: 12345678, refresh_token: refresh(1) }],
  ['an access_token null', { access_token: null, refresh_token: refresh(1), token_type: 'Bearer' }],
];

describe.each(REFUSED)('a token answer with %s', (_name, shape) => {
  it('is refused with OAResponseValidationError, and nothing is sent', async () => {
    const { client } = await setup((req, res) => {
      if (req.url?.startsWith(`${API}/auth/`)) return json(res, 201, { data: shape });
      json(res, 201, { data: 'success' });
    });
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expect((error as OAResponseValidationError).issues.map((issue) => issue.path)).toEqual([
      ['data', 'access_token'],
    ]);
    expect(sends()).toEqual([]);
    expect(await rejection(client.generateToken())).toBeInstanceOf(OAResponseValidationError);
  });
});
