// One worker process of bench/outbox.bench.ts: an outbox worker whose client shares the token and the
// quota through Redis. Prints `ready`; runs until killed.
import { OAClient } from '../src/index.js';
import { createOutbox } from '../src/queue/index.js';
import { createRedisCoordination } from '../src/redis/index.js';

const { redisUrl, baseUrl, limit, concurrency } = JSON.parse(process.argv[2] ?? '{}') as {
  redisUrl: string;
  baseUrl: string;
  limit: { max: number; windowMs: number };
  concurrency: number;
};
const coordination = createRedisCoordination({ url: redisUrl });
const client = new OAClient({
  baseUrl,
  apiKey: 'test-api-key',
  apiSecret: 'test-api-secret',
  rateLimit: { general: limit },
  coordination,
});
createOutbox({ connection: { url: redisUrl }, name: 'bench' }).work({ client, concurrency });
process.stdout.write('ready\n');
