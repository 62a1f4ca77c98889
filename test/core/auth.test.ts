import { afterEach, describe, expect, it } from 'vitest';
import {
  MemoryTokenStore,
  OAClient,
  type OAClientOptions,
  OAUnauthorizedError,
  type StoredToken,
  type TokenStore,
} from '../../src/index.js';
import { json, type RawServer, startRawServer } from '../helpers/raw-server.js';
import { makeJwt } from '../helpers/tokens.js';

const API = '/api/v2/public';
const unauthorized = {
  statusCode: 401,
  data: { statusCode: 401, code: 'UNAUTHORIZED', info: 'Unauthorized' },
};

/**
 * An auth server with state: it issues numbered pairs, accepts only live access tokens and refresh
 * tokens it has not revoked, and records every delivered message.
 */
async function startAuthServer(
  opts: { lifetimeSeconds?: number; opaque?: boolean; credentialsOk?: () => boolean } = {},
) {
  let issued = 0;
  const live = new Map<string, number>(); // access token -> expiry ms
  const refreshable = new Set<string>();
  const delivered: string[] = [];
  const issue = () => {
    issued++;
    const lifetime = opts.lifetimeSeconds ?? 3600;
    const iat = Math.floor(Date.now() / 1000);
    const access_token = opts.opaque
      ? `opaque-access-${issued}`
      : makeJwt({ n: issued, iat, exp: iat + lifetime });
    const refresh_token = `refresh-${issued}-abcdef`;
    live.set(access_token, Date.now() + lifetime * 1000);
    refreshable.add(refresh_token);
    return {
      access_token,
      refresh_token,
      token_type: 'Bearer',
      expires_in: opts.opaque ? `${lifetime}s` : '1h',
    };
  };
  const server = await startRawServer((req, res, text) => {
    const body = JSON.parse(text || '{}') as Record<string, string>;
    if (req.url === `${API}/auth/token`) {
      if (opts.credentialsOk && !opts.credentialsOk()) return json(res, 401, unauthorized);
      return json(res, 201, { data: issue() });
    }
    if (req.url === `${API}/auth/refresh-token`) {
      if (!refreshable.delete(body.refresh_token ?? '')) return json(res, 401, unauthorized);
      return json(res, 201, { data: issue() });
    }
    const token = req.headers.authorization?.replace(/^Bearer /, '') ?? '';
    if ((live.get(token) ?? 0) <= Date.now()) return json(res, 401, unauthorized);
    delivered.push(body.msg ?? '');
    // Answer a little later so that concurrent calls really overlap.
    setTimeout(() => json(res, 201, { data: 'success' }), 20);
  });
  return {
    server,
    delivered,
    /** Makes every access token issued so far invalid, as a server restart or revocation would. */
    revokeAccessTokens: () => live.clear(),
    revokeRefreshTokens: () => refreshable.clear(),
    count: (path: string) => server.hits.filter((h) => h.path === `${API}${path}`).length,
  };
}

let server: RawServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
});

function connect(url: string, options: Partial<OAClientOptions> = {}) {
  client = new OAClient({ baseUrl: url, apiKey: 'key-123456', apiSecret: 'secret-abcdef', ...options });
  return client;
}

const send = (c: OAClient, msg: string) => c.sendText({ user_id: 'u1', msg });

describe('token life cycle', () => {
  it('the first calls obtain one pair between them', async () => {
    const fake = await startAuthServer();
    server = fake.server;
    const c = connect(server.url);
    await Promise.all(Array.from({ length: 10 }, (_, i) => send(c, `m${i}`)));
    expect(fake.count('/auth/token')).toBe(1);
    expect(fake.delivered).toHaveLength(10);
  });

  it('a JWT close to its exp is refreshed before use, with no 401', async () => {
    const fake = await startAuthServer({ lifetimeSeconds: 2 });
    server = fake.server;
    const c = connect(server.url);
    await send(c, 'first');
    // Refreshed once half of a short lifetime is gone (the 5-minute margin is capped at half).
    await new Promise((r) => setTimeout(r, 1100));
    await send(c, 'second');
    expect(fake.count('/auth/refresh-token')).toBe(1);
    expect(fake.count('/webhook/broadcast-message')).toBe(2);
    const [firstAuth, secondAuth] = server.hits
      .filter((h) => h.path.endsWith('broadcast-message'))
      .map((h) => h.authorization);
    expect(secondAuth).not.toBe(firstAuth);
    expect(fake.delivered).toEqual(['first', 'second']);
  });

  it('an opaque token is refreshed by expires_in', async () => {
    const fake = await startAuthServer({ lifetimeSeconds: 2, opaque: true });
    server = fake.server;
    const c = connect(server.url);
    await send(c, 'first');
    await new Promise((r) => setTimeout(r, 1100));
    await send(c, 'second');
    expect(fake.count('/auth/refresh-token')).toBe(1);
    expect(server.hits.at(-1)?.authorization).toBe('Bearer opaque-access-2');
    expect(fake.count('/webhook/broadcast-message')).toBe(2);
  });

  it('a 401 on 10 concurrent calls triggers one refresh, then one replay each', async () => {
    const fake = await startAuthServer();
    server = fake.server;
    const c = connect(server.url);
    await send(c, 'warm-up');
    fake.revokeAccessTokens();
    const msgs = Array.from({ length: 10 }, (_, i) => `m${i}`);
    const results = await Promise.all(msgs.map((m) => send(c, m)));
    expect(results).toEqual(Array(10).fill('success'));
    expect(fake.count('/auth/refresh-token')).toBe(1);
    expect(fake.count('/auth/token')).toBe(1);
    expect(fake.count('/webhook/broadcast-message')).toBe(1 + 10 + 10);
    expect([...fake.delivered].sort()).toEqual(['warm-up', ...msgs].sort());
  });

  it('a refused refresh token falls back to generateToken', async () => {
    const fake = await startAuthServer();
    server = fake.server;
    const c = connect(server.url);
    await send(c, 'a');
    fake.revokeAccessTokens();
    fake.revokeRefreshTokens();
    await send(c, 'b');
    expect(fake.count('/auth/refresh-token')).toBe(1);
    expect(fake.count('/auth/token')).toBe(2);
    expect(fake.delivered).toEqual(['a', 'b']);
  });

  it('wrong credentials end in OAUnauthorizedError after a bounded number of tries', async () => {
    const fake = await startAuthServer({ credentialsOk: () => false });
    server = fake.server;
    const c = connect(server.url, { maxRetries: 5 });
    const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => send(c, `m${i}`)));
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(OAUnauthorizedError);
    }
    // One shared login for the ten calls; a 401 on credentials is final, whatever maxRetries says.
    expect(fake.count('/auth/token')).toBe(1);
    expect(fake.count('/webhook/broadcast-message')).toBe(0);
    await expect(send(c, 'later')).rejects.toBeInstanceOf(OAUnauthorizedError);
    expect(fake.count('/auth/token')).toBe(2);
  });

  it('credentials revoked mid-life: 401, refused refresh, refused login, then the error', async () => {
    let credentialsOk = true;
    const fake = await startAuthServer({ credentialsOk: () => credentialsOk });
    server = fake.server;
    const c = connect(server.url);
    await send(c, 'a');
    credentialsOk = false;
    fake.revokeAccessTokens();
    fake.revokeRefreshTokens();
    await expect(send(c, 'b')).rejects.toBeInstanceOf(OAUnauthorizedError);
    expect(fake.count('/webhook/broadcast-message')).toBe(2);
    expect(fake.count('/auth/refresh-token')).toBe(1);
    expect(fake.count('/auth/token')).toBe(2);
  });

  it('reads a shared store only to renew: a fresh pair is used from memory', async () => {
    const fake = await startAuthServer({ lifetimeSeconds: 2 });
    server = fake.server;
    // A store that answers asynchronously, as a shared one (Redis) does, counting its reads.
    const inner = new MemoryTokenStore();
    let reads = 0;
    const store: TokenStore = {
      get: async (key) => {
        reads++;
        return inner.get(key);
      },
      set: async (key, token) => inner.set(key, token),
      delete: async (key) => inner.delete(key),
    };
    const c = connect(server.url, { tokenStore: store });
    for (const msg of ['a', 'b', 'c', 'd', 'e']) await send(c, msg);
    // One read before the first login; none for the four calls after it.
    expect(reads).toBe(1);
    await new Promise((r) => setTimeout(r, 1100));
    await send(c, 'after half the lifetime');
    // Stale: read again (another process may have renewed), then refreshed once.
    expect(reads).toBe(2);
    expect(fake.count('/auth/refresh-token')).toBe(1);
    expect(fake.delivered).toHaveLength(6);
  });

  it('uses a pair from the token store without logging in', async () => {
    const fake = await startAuthServer();
    server = fake.server;
    const seed = connect(server.url);
    const pair = await seed.generateToken();
    const store = new MemoryTokenStore();
    const stored: StoredToken = { ...pair, obtained_at: Date.now(), expires_at: Date.now() + 3_600_000 };
    // Kept per OA: its api key at its base URL.
    store.set(`key-123456@${server.url}/`, stored);
    const c = new OAClient({
      baseUrl: server.url,
      apiKey: 'key-123456',
      apiSecret: 'secret-abcdef',
      tokenStore: store,
    });
    await send(c, 'x');
    await c.close();
    expect(fake.count('/auth/token')).toBe(1);
    expect(server.hits.at(-1)?.authorization).toBe(`Bearer ${pair.access_token}`);
  });
});

describe('servers that hand back a token the client already holds', () => {
  it('a refresh that returns the same refresh token (no rotation) keeps working', async () => {
    let issued = 0;
    const refresh_token = 'static-refresh-token-123456';
    const used = new Set<string>();
    server = await startRawServer((req, res) => {
      if (req.url?.startsWith(`${API}/auth/`)) {
        issued++;
        return json(res, 201, {
          data: {
            access_token: `access-${issued}-abcdef`,
            refresh_token,
            token_type: 'Bearer',
            expires_in: '1h',
          },
        });
      }
      // Each access token works once, so every send after the first needs a refresh.
      const token = req.headers.authorization ?? '';
      if (used.has(token)) return json(res, 401, unauthorized);
      used.add(token);
      json(res, 201, { data: 'success' });
    });
    const c = connect(server.url);
    for (const msg of ['a', 'b', 'c']) expect(await send(c, msg)).toBe('success');
    const refreshes = server.hits.filter((h) => h.path.endsWith('/refresh-token'));
    expect(refreshes.map((h) => h.body)).toEqual([{ refresh_token }, { refresh_token }]);
  });

  it('a login that returns the access token already held stores it as it is', async () => {
    const pair = {
      access_token: 'same-access-token-123456',
      refresh_token: 'same-refresh-123456',
      token_type: 'Bearer',
      expires_in: '1h',
    };
    server = await startRawServer((req, res) => {
      if (req.url === `${API}/auth/token`) return json(res, 201, { data: pair });
      json(res, 201, { data: 'success' });
    });
    const c = connect(server.url);
    expect(await c.generateToken()).toEqual(pair);
    expect(await c.generateToken()).toEqual(pair);
    await send(c, 'x');
    expect(server.hits.at(-1)?.authorization).toBe(`Bearer ${pair.access_token}`);
  });
});
