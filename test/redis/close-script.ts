// Run as a child process by close.test.ts with a Redis URL: importing oa-messaging/redis opens nothing
// and loads no ioredis; after use (token, lock, limiter with a request in flight), close() leaves no
// handle behind and the process ends by itself.
import { createRequire } from 'node:module';
import { createRedisCoordination } from '../../src/redis/index.js';

const handles = () =>
  (process as unknown as { _getActiveHandles(): { constructor?: { name?: string } }[] })
    ._getActiveHandles()
    .filter((h) => !(h as { _isStdio?: boolean })._isStdio);
const ioredisLoaded = () =>
  Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('/ioredis/'));

const url = process.argv[2] ?? '';
const coordination = createRedisCoordination({ url });
const limiter = coordination.createLimiter('close-key', {
  general: { max: 5, windowMs: 60_000 },
  upload: { max: 1, windowMs: 60_000 },
});
console.log(`after create: handles ${handles().length}, ioredis loaded ${ioredisLoaded()}`);

await coordination.tokenStore.set('close-key', {
  access_token: 'a',
  refresh_token: 'r',
  token_type: 'Bearer',
  obtained_at: Date.now(),
  expires_at: Date.now() + 60_000,
});
await coordination.withRenewalLock('close-key', async () => coordination.tokenStore.get('close-key'));
const done = await limiter.acquire('upload');
done.ended();
// A request still in flight (its lease timer runs) and one queued behind the full upload window.
await limiter.acquire('general');
const queued = Promise.resolve(limiter.acquire('upload')).catch((e: Error) => e.name);
console.log(`in use: ioredis loaded ${ioredisLoaded()}`);

await coordination.close();
console.log(`queued request: ${await queued}`);
// Closed handles leave the list on the next turn of the event loop.
await new Promise((resolve) => setTimeout(resolve, 50));
const left = handles();
console.log(`handles after close: ${left.length}`);
if (left.length > 0) {
  console.log(left.map((h) => h.constructor?.name));
  process.exitCode = 3;
}
