// Run as a child process by processes.test.ts: one process of a fleet that serves several OA accounts
// through createAccounts and one Redis. Sends its texts for every account at once, prints one JSON line.
import { createAccounts } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';

export interface AccountWorkerConfig {
  name: string;
  redisUrl: string;
  baseUrl: string;
  accounts: { username: string; apiKey: string; apiSecret: string }[];
  texts: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as AccountWorkerConfig;
const coordination = createRedisCoordination({ url: config.redisUrl });
const accounts = createAccounts({
  credentials: (account) => config.accounts.find((a) => a.username === account),
  clientOptions: { baseUrl: config.baseUrl, coordination },
});
const results = await Promise.allSettled(
  config.accounts.flatMap(({ username }) =>
    Array.from({ length: config.texts }, (_, n) =>
      accounts.client(username).sendText({ user_id: 'u-1', msg: `${config.name} ${username} ${n}` }),
    ),
  ),
);
const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
console.log(JSON.stringify({ ok: results.length - failures.length, failures }));
await accounts.close();
await coordination.close();
