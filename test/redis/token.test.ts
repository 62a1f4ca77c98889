// The shared token pair and the renewal lock against a real redis-server.
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredToken } from '../../src/index.js';
import { OAAbortError, OAClient, OAConfigError } from '../../src/index.js';
import { createRedisCoordination, type RedisCoordination } from '../../src/redis/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { json, startRawServer } from '../helpers/raw-server.js';
import { makeJwt } from '../helpers/tokens.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

const pair = (expiresInMs: number): StoredToken => ({
  access_token: 'access-1',
  refresh_token: 'refresh-1',
  token_type: 'Bearer',
  obtained_at: Date.now(),
  expires_at: Date.now() + expiresInMs,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_SERVER)('the shared token pair and renewal lock', () => {
  const shared = useRedisServer();
  let open: RedisCoordination[] = [];

  afterEach(async () => {
    await Promise.all(open.map((c) => c.close()));
    open = [];
  });

  const coordination = (options: { lockTtlMs?: number; keepTokenAfterExpiryMs?: number | false } = {}) => {
    const created = createRedisCoordination({ url: shared.server.url, ...options });
    open.push(created);
    return created;
  };

  it('keeps one pair per api key, with a ttl a day past its expiry by default', async () => {
    const a = coordination();
    const b = coordination();
    const token = pair(3_600_000);
    await a.tokenStore.set('key-1', token);
    expect(await b.tokenStore.get('key-1')).toEqual(token);
    expect(await b.tokenStore.get('key-2')).toBeUndefined();
    const ttl = await shared.redis.pttl('oa:token:key-1');
    expect(ttl).toBeGreaterThan(3_600_000 + 86_400_000 - 5000);
    expect(ttl).toBeLessThanOrEqual(3_600_000 + 86_400_000);
    await b.tokenStore.delete('key-1');
    expect(await a.tokenStore.get('key-1')).toBeUndefined();
  });

  it('keeps the pair without a ttl when told, and ignores a value it did not write', async () => {
    const a = coordination({ keepTokenAfterExpiryMs: false });
    await a.tokenStore.set('key-1', pair(1000));
    expect(await shared.redis.pttl('oa:token:key-1')).toBe(-1);
    await shared.redis.set('oa:token:key-1', 'not json');
    expect(await a.tokenStore.get('key-1')).toBeUndefined();
    await shared.redis.set('oa:token:key-1', JSON.stringify({ access_token: 'x' }));
    expect(await a.tokenStore.get('key-1')).toBeUndefined();
  });

  it('runs one renewal at a time across processes; the next one reads what the first saved', async () => {
    const processes = [coordination(), coordination(), coordination()];
    let running = 0;
    let most = 0;
    let logins = 0;
    const renew = (c: RedisCoordination) => async () => {
      running++;
      most = Math.max(most, running);
      try {
        const saved = await c.tokenStore.get('key-1');
        if (saved) return saved.access_token;
        logins++;
        await sleep(100);
        await c.tokenStore.set('key-1', { ...pair(3_600_000), access_token: 'from-the-one-login' });
        return 'from-the-one-login';
      } finally {
        running--;
      }
    };
    const tokens = await Promise.all(processes.map((c) => c.withRenewalLock('key-1', renew(c))));
    expect(tokens).toEqual(['from-the-one-login', 'from-the-one-login', 'from-the-one-login']);
    expect(most).toBe(1);
    expect(logins).toBe(1);
    // Released by its last holder (a command that does not hold up the renewal), well before its
    // 10 s ttl could end it.
    await expect.poll(() => shared.redis.exists('oa:lock:key-1'), { timeout: 2000, interval: 10 }).toBe(0);
  });

  it('extends the lock while a slow renewal runs past the lock ttl', async () => {
    const a = coordination({ lockTtlMs: 300 });
    const b = coordination({ lockTtlMs: 300 });
    const order: string[] = [];
    const slow = a.withRenewalLock('key-1', async () => {
      order.push('a start');
      await sleep(1000);
      order.push('a end');
    });
    // a holds the lock (its renewal runs): not a pause of ours, which a's new connection may outlast.
    await expect.poll(() => order, { timeout: 10_000, interval: 10 }).toContain('a start');
    await b.withRenewalLock('key-1', async () => {
      order.push('b');
    });
    await slow;
    expect(order).toEqual(['a start', 'a end', 'b']);
  });

  it('lets the lock of a dead holder expire after lockTtlMs', async () => {
    // A holder that died: its lock is there, nobody extends it.
    await shared.redis.set('oa:lock:key-1', 'dead-process', 'PX', 400);
    const b = coordination({ lockTtlMs: 400 });
    const started = performance.now();
    await b.withRenewalLock('key-1', async () => {});
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(350);
    // The lock's ttl, then the next ask (the wait between asks grows, to a few hundred ms), on a new
    // connection, with room for a loaded machine.
    expect(waited).toBeLessThan(400 + 1000);
  });

  it('stops waiting for the lock with OAAbortError, and releases it when the renewal fails', async () => {
    const a = coordination();
    const b = coordination();
    let release = () => {};
    let held = false;
    const holding = a.withRenewalLock(
      'key-1',
      () =>
        new Promise<void>((resolve) => {
          held = true;
          release = resolve;
        }),
    );
    // a holds the lock: not a pause of ours, which a's new connection may outlast.
    await expect.poll(() => held, { timeout: 10_000, interval: 10 }).toBe(true);
    const controller = new AbortController();
    const waiting = b.withRenewalLock('key-1', async () => 'never', controller.signal);
    setTimeout(() => controller.abort(), 100);
    await expect(waiting).rejects.toBeInstanceOf(OAAbortError);
    release();
    await holding;

    const failure = new Error('login refused');
    await expect(a.withRenewalLock('key-1', () => Promise.reject(failure))).rejects.toBe(failure);
    await expect(b.withRenewalLock('key-1', async () => 'next')).resolves.toBe('next');
  });

  it('gives clients in separate processes one login, then one refresh per expiry with the rotated token', async () => {
    // Tokens live 3 s and are refreshed in their last half; the fake refuses a refresh token used twice.
    const mock = await createMockServer({ tokenLifetimeMs: 3000 });
    const clients = [coordination(), coordination()].map(
      (c) =>
        new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret, coordination: c }),
    );
    const sendAll = (round: number) =>
      Promise.all(
        clients.flatMap((client, n) =>
          [0, 1, 2].map((i) => client.sendText({ user_id: `u-${n}-${i}`, msg: `round ${round}` })),
        ),
      );
    try {
      await sendAll(0);
      for (const round of [1, 2]) {
        await sleep(1600);
        await sendAll(round);
      }
      const count = (path: string) => mock.requests.filter((r) => r.path.endsWith(path)).length;
      expect(count('/auth/token')).toBe(1);
      expect(count('/auth/refresh-token')).toBe(2);
      expect(mock.requests.every((r) => r.status === 201)).toBe(true);
      expect(mock.deliveries).toHaveLength(18);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await mock.close();
    }
  });

  it('shares a pair whose answer had no refresh token, token_type or expires_in', async () => {
    const API = '/api/v2/public';
    let logins = 0;
    const server = await startRawServer((req, res) => {
      if (req.url === `${API}/auth/token`) {
        const iat = Math.floor(Date.now() / 1000);
        return json(res, 201, {
          data: { access_token: makeJwt({ n: ++logins, iat, exp: iat + 600 }), expires_in: null },
        });
      }
      json(res, 201, { data: 'success' });
    });
    const clients = [coordination(), coordination()].map(
      (c) =>
        new OAClient({
          baseUrl: server.url,
          apiKey: 'key-123456',
          apiSecret: 'secret-abcdef',
          coordination: c,
        }),
    );
    try {
      for (const client of clients) await client.sendText({ user_id: 'u1', msg: 'x' });
      // The second client read the pair the first saved in Redis: one login between them.
      expect(logins).toBe(1);
      const [first, second] = server.hits.filter((h) => h.path.endsWith('/broadcast-message'));
      expect(second?.authorization).toBe(first?.authorization);
      // Kept per OA: its api key at its base URL.
      const key = `oa:token:key-123456@${server.url}/`;
      const stored = JSON.parse((await shared.redis.get(key)) ?? '{}') as StoredToken;
      expect([stored.refresh_token, stored.token_type, stored.expires_at - stored.obtained_at]).toEqual([
        '',
        'Bearer',
        600_000,
      ]);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      await server.close();
    }
  });

  it('checks its options', () => {
    expect(() => createRedisCoordination({} as never)).toThrow(OAConfigError);
    expect(() => createRedisCoordination({ url: shared.server.url, lockTtlMs: 0 })).toThrow(OAConfigError);
    expect(() => createRedisCoordination({ client: {} as never })).toThrow(OAConfigError);
  });
});
