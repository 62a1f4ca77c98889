// Run as a child process by processes.test.ts: one worker of a fleet that shares an api key through
// Redis. It says `ready` once set up, waits for `go` on stdin, sends its texts and uploads at once, and
// prints one JSON line of results.
import { fileURLToPath } from 'node:url';
import { OAClient } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';

export interface WorkerConfig {
  name: string;
  redisUrl: string;
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  texts: number;
  uploads: number;
  lockTtlMs: number;
  rateLimit: { general: { max: number; windowMs: number }; upload: { max: number; windowMs: number } };
}

const config = JSON.parse(process.argv[2] ?? '{}') as WorkerConfig;
const image = fileURLToPath(new URL('../fixtures/media/sample.png', import.meta.url));

const coordination = createRedisCoordination({ url: config.redisUrl, lockTtlMs: config.lockTtlMs });
const client = new OAClient({
  baseUrl: config.baseUrl,
  apiKey: config.apiKey,
  apiSecret: config.apiSecret,
  rateLimit: config.rateLimit,
  coordination,
  // Every upload goes out (no reuse of the answer for the same bytes): the uploads are what is counted.
  reuseUploads: false,
});

process.stdout.write('ready\n');
await new Promise<void>((resolve) => {
  process.stdin.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('go')) resolve();
  });
});
process.stdin.pause();

const started = performance.now();
const results = await Promise.allSettled([
  ...Array.from({ length: config.texts }, (_, i) =>
    client.sendText({ user_id: `${config.name}-user-${i}`, msg: `${config.name} message ${i}` }),
  ),
  ...Array.from({ length: config.uploads }, () => client.uploadImage(image)),
]);
const failures = results.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
process.stdout.write(
  `${JSON.stringify({ name: config.name, ok: results.length - failures.length, failures, ms: performance.now() - started })}\n`,
);
await client.close();
await coordination.close();
