// Run as a child process by the outbox's accounts tests: one outbox worker for every account of the
// fake, each account's token and quota shared through Redis. It prints `ready` once its worker runs,
// and runs until it is killed (SIGKILL) or stopped (SIGTERM: it closes and exits).
import { createAccounts } from '../../src/index.js';
import { createOutbox } from '../../src/queue/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';

/** What the test passes as the one argument (JSON). */
export interface AccountsWorkerConfig {
  redisUrl: string;
  baseUrl: string;
  accounts: { username: string; apiKey: string; apiSecret: string }[];
  name: string;
  concurrency: number;
  lockDurationMs?: number;
  /** Each account's quota, as the fake's. */
  general: { max: number; windowMs: number };
  /** The outbox's `replyReserve`. @default the outbox's (0.1) */
  replyReserve?: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as AccountsWorkerConfig;
// A short lease: the slots of a killed worker's requests come back soon after their window.
const coordination = createRedisCoordination({ url: config.redisUrl, inFlightLeaseMs: 1500 });
const accounts = createAccounts({
  credentials: (account) => config.accounts.find((a) => a.username === account),
  clientOptions: {
    baseUrl: config.baseUrl,
    coordination,
    rateLimit: { general: config.general, upload: { max: 1, windowMs: config.general.windowMs } },
  },
});
const outbox = createOutbox({
  connection: { url: config.redisUrl },
  name: config.name,
  ...(config.replyReserve === undefined ? {} : { replyReserve: config.replyReserve }),
});
outbox.work({ accounts, concurrency: config.concurrency, lockDurationMs: config.lockDurationMs });
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await outbox.close();
  await accounts.close();
  await coordination.close();
  process.exit(0);
});
