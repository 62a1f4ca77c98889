// Run as a child process by the outbox chaos test: one outbox worker sharing the api key's token and
// quota through Redis. It prints `ready` once its worker runs, and runs until it is killed. With `tag`,
// every request it sends carries its pid (`x-outbox-worker`), so that the fake's log tells who sent it.
// With `refuseSendsAt`, every send goes to that origin (a port nothing listens on: refused) while its
// logins reach the fake; with `printRetries`, each retry of its client is a line `retry <reason>`. With
// `clockSkewMs`, its clock runs that far ahead of the machine's (and Redis's).
import { Agent } from 'undici';
import { type DispatcherLike, OAClient } from '../../src/index.js';
import { createOutbox } from '../../src/queue/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';

/** What the test passes as the one argument (JSON). */
export interface OutboxWorkerConfig {
  redisUrl: string;
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  name: string;
  concurrency: number;
  lockDurationMs: number;
  rateLimit: { general: { max: number; windowMs: number }; upload: { max: number; windowMs: number } };
  tag?: boolean;
  refuseSendsAt?: string;
  printRetries?: boolean;
  /** This process's clock runs this many ms ahead (`Date.now`, which BullMQ and the SDK read). */
  clockSkewMs?: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as OutboxWorkerConfig;
if (config.clockSkewMs) {
  const realNow = Date.now;
  const skew = config.clockSkewMs;
  Date.now = () => realNow() + skew;
}
// A short lease: the slots of a killed worker's requests come back soon after their window.
const coordination = createRedisCoordination({ url: config.redisUrl, inFlightLeaseMs: 1500 });
const agent = new Agent();
const refusing: DispatcherLike = {
  dispatch(options, handler) {
    const origin = options.path.includes('/auth/') ? options.origin : (config.refuseSendsAt ?? '');
    return agent.dispatch({ ...options, origin }, handler as never);
  },
};
const client = new OAClient({
  baseUrl: config.baseUrl,
  apiKey: config.apiKey,
  apiSecret: config.apiSecret,
  rateLimit: config.rateLimit,
  coordination,
  ...(config.tag ? { defaultHeaders: { 'x-outbox-worker': String(process.pid) } } : {}),
  ...(config.refuseSendsAt ? { dispatcher: refusing } : {}),
});
if (config.printRetries) client.on('retry', (e) => process.stdout.write(`retry ${e.reason}\n`));
const outbox = createOutbox({ connection: { url: config.redisUrl }, name: config.name });
outbox.work({ client, concurrency: config.concurrency, lockDurationMs: config.lockDurationMs });
process.stdout.write('ready\n');
process.on('SIGTERM', async () => {
  await outbox.close();
  await client.close();
  await coordination.close();
  process.exit(0);
});
