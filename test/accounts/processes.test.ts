// Two processes serving the same OA accounts through one Redis: each account logs in once across them.
import { afterEach, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { runScript } from '../helpers/run-script.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import type { AccountWorkerConfig } from './account-worker.js';
import { logins, servedAccounts, texts } from './support.js';

const SERVED = servedAccounts(3);

const shared = REDIS_SERVER ? useRedisServer() : undefined;
let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

it.skipIf(!REDIS_SERVER)(
  'two processes sharing Redis log each account in once, and each sends land in their account',
  async () => {
    server = await createMockServer({ accounts: SERVED });
    const config = (name: string): AccountWorkerConfig => ({
      name,
      redisUrl: shared?.server.url ?? '',
      baseUrl: server?.url ?? '',
      accounts: SERVED,
      texts: 4,
    });
    const script = new URL('./account-worker.ts', import.meta.url);
    const runs = await Promise.all(
      ['a', 'b'].map((name) => runScript(script, [JSON.stringify(config(name))], 30_000)),
    );
    for (const run of runs) {
      expect(run.code, run.output).toBe(0);
      expect(run.output).toContain('"ok":12,"failures":[]');
    }
    for (const { username } of SERVED) {
      expect(logins(server, username)).toBe(1);
      expect(texts(server, username)).toHaveLength(8);
      expect(texts(server, username).every((msg) => msg.includes(username))).toBe(true);
    }
  },
);
