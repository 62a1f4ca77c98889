// One worker process of bench/outbox.bench.ts (one client), bench/outbox-accounts.bench.ts and
// bench/outbox-replies.bench.ts (every account of the fake, `accounts`): an outbox worker whose
// clients share their tokens and quotas through Redis. Prints `ready`; runs until killed.
import { createAccounts, OAClient } from '../src/index.js';
import { createOutbox } from '../src/queue/index.js';
import { createRedisCoordination } from '../src/redis/index.js';

const { redisUrl, baseUrl, limit, concurrency, name, accounts, replyReserve } = JSON.parse(
  process.argv[2] ?? '{}',
) as {
  redisUrl: string;
  baseUrl: string;
  limit: { max: number; windowMs: number };
  concurrency: number;
  /** @default 'bench' */
  name?: string;
  /** The fake's accounts: with them, the worker serves every account (`outbox.work({ accounts })`). */
  accounts?: { username: string; apiKey: string; apiSecret: string }[];
  /** The outbox's `replyReserve`. @default the outbox's (0.1) */
  replyReserve?: number;
};
const coordination = createRedisCoordination({ url: redisUrl });
const outbox = createOutbox({
  connection: { url: redisUrl },
  name: name ?? 'bench',
  ...(replyReserve === undefined ? {} : { replyReserve }),
});
if (accounts) {
  outbox.work({
    accounts: createAccounts({
      credentials: (id) => accounts.find((a) => a.username === id),
      clientOptions: {
        baseUrl,
        coordination,
        rateLimit: { general: limit, upload: { max: 1, windowMs: limit.windowMs } },
      },
    }),
    concurrency,
  });
} else {
  const client = new OAClient({
    baseUrl,
    apiKey: 'test-api-key',
    apiSecret: 'test-api-secret',
    rateLimit: { general: limit },
    coordination,
  });
  outbox.work({ client, concurrency });
}
process.stdout.write('ready\n');
