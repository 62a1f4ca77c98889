// Token pairs left in Redis by an earlier fake OA server on the same address: each account pays one
// refused refresh and one login, and after its login no call of it refreshes with the old pair. Three
// accounts of one service with a Redis coordination, many sends at once.
//
// The fake records a request it cannot attribute (a refresh token or an access token it never issued)
// under its first account: the other accounts' refused refreshes show there, after that account's own
// login. So refreshes are counted over the whole fake (one per account), logins per account.
import { afterEach, expect, it } from 'vitest';
import { createAccounts, type OAAccounts } from '../../src/index.js';
import { createRedisCoordination, type RedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { logins, servedAccounts, texts } from './support.js';

const SERVED = servedAccounts(3);
const shared = REDIS_SERVER ? useRedisServer() : undefined;

let server: MockServer | undefined;
let accounts: OAAccounts | undefined;
let coordination: RedisCoordination | undefined;
afterEach(async () => {
  await accounts?.close();
  await coordination?.close();
  await server?.close();
  accounts = coordination = server = undefined;
});

async function service(url: string): Promise<OAAccounts> {
  coordination = createRedisCoordination({ url: shared?.server.url ?? '' });
  accounts = createAccounts({
    credentials: (id) => SERVED.find((a) => a.username === id),
    clientOptions: { baseUrl: url, coordination },
  });
  return accounts;
}

/** Every refresh request the fake received, whichever account it recorded it under. */
function refreshes(mock: MockServer): number {
  return mock.accounts.flatMap((a) => a.requests).filter((r) => r.path.endsWith('/auth/refresh-token'))
    .length;
}

it.skipIf(!REDIS_SERVER)(
  'after the login that replaces a stale pair, no call of the account refreshes with the old pair',
  async () => {
    for (let round = 0; round < 3; round++) {
      // An earlier fake on this address: its pairs stay in Redis.
      const earlier = await createMockServer({ accounts: SERVED, rateLimit: false });
      const port = Number(new URL(earlier.url).port);
      const before = await service(earlier.url);
      await Promise.all(SERVED.map((a) => before.client(a.username).sendText({ user_id: 'u', msg: 'x' })));
      await before.close();
      await coordination?.close();
      await earlier.close();
      // A new fake on the same address, which knows none of them; a new service, many sends at once.
      server = await createMockServer({ accounts: SERVED, rateLimit: false, port });
      const now = await service(server.url);
      const sends = SERVED.flatMap((a) =>
        Array.from({ length: 12 }, (_, n) => now.client(a.username).sendText({ user_id: 'u', msg: `m${n}` })),
      );
      const outcome = await settleWithin(Promise.all(sends), 15_000, 'the sends');
      expect(outcome.ok, String(outcome.ok ? '' : outcome.error)).toBe(true);
      for (const { username } of SERVED) {
        expect(texts(server, username)).toHaveLength(12);
        expect(logins(server, username)).toBe(1);
      }
      // One refused refresh per account with its stale pair, none after its login.
      expect(refreshes(server)).toBe(SERVED.length);
      await accounts?.close();
      await coordination?.close();
      await server.close();
      accounts = coordination = server = undefined;
      await shared?.redis.flushall();
    }
  },
  60_000,
);
