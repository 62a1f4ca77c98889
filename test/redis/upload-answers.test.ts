// The answers of uploads shared through the Redis coordination: an upload in one client (one process)
// is reused by another with the same api key for the same bytes, never by another api key.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient, type OAClientOptions } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

const png = fileURLToPath(new URL('../fixtures/media/sample.png', import.meta.url));
const clip = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));

describe.skipIf(!REDIS_SERVER)('upload answers shared through Redis', () => {
  const shared = useRedisServer();
  let mock: MockServer | undefined;
  const open: { close(): Promise<void> }[] = [];

  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
    await mock?.close();
    mock = undefined;
  });

  /** A client with a coordination of its own on the shared Redis, as another process would have. */
  const clientOf = (options: Partial<OAClientOptions> = {}) => {
    if (!mock) throw new Error('no fake server');
    const coordination = createRedisCoordination({ url: shared.server.url });
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
      ...options,
    });
    open.push(coordination, client);
    return client;
  };

  const uploads = (kind: string) =>
    mock?.requests.filter((r) => r.path === `/api/v2/public/upload/${kind}`).length ?? 0;

  it('two clients sharing a Redis coordination upload the same bytes once', async () => {
    mock = await createMockServer();
    const one = clientOf();
    const two = clientOf();
    const first = await one.uploadImage(png);
    const video = await one.uploadVideo(clip);
    expect(await two.uploadImage(png)).toEqual(first);
    expect(await two.uploadVideo(clip)).toEqual(video);
    expect([uploads('image'), uploads('video')]).toEqual([1, 1]);

    // One key per answer, expiring after the client's ttlMs (a day by default).
    const keys = (await shared.redis.keys('oa:upload:*')).sort();
    expect(keys).toHaveLength(2);
    for (const key of keys) {
      expect(key).toMatch(
        new RegExp(
          `^oa:upload:${mock.apiKey}@${mock.url}/:${mock.url}/api/v2/public/upload/(image|video):[0-9a-f]{64}$`,
        ),
      );
      const ttl = await shared.redis.pttl(key);
      expect(ttl).toBeGreaterThan(86_400_000 - 60_000);
      expect(ttl).toBeLessThanOrEqual(86_400_000);
    }
  });

  it('another api key uploads the same bytes again', async () => {
    mock = await createMockServer();
    const one = clientOf();
    await one.uploadImage(png);
    // The fake knows one key: the other client gets a working token through the shared store, under
    // its own api key, so that only the key differs.
    const token = await shared.redis.get(`oa:token:${mock.apiKey}@${mock.url}/`);
    expect(token).toBeTruthy();
    await shared.redis.set(`oa:token:another-api-key@${mock.url}/`, token as string, 'PX', 3_600_000);
    const two = clientOf({ apiKey: 'another-api-key', apiSecret: 'another-secret' });
    await two.uploadImage(png);
    expect(uploads('image')).toBe(2);
    expect(mock.requests.filter((r) => r.path.endsWith('/auth/token'))).toHaveLength(1);
  });

  it('the ttlMs of reuseUploads is the time the answer stays in Redis', async () => {
    mock = await createMockServer();
    const client = clientOf({ reuseUploads: { ttlMs: 5_000 } });
    await client.uploadImage(png);
    const [key] = await shared.redis.keys('oa:upload:*');
    const ttl = await shared.redis.pttl(key as string);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(5_000);
  });

  it('a value in Redis that is not an answer is no answer: the file is uploaded', async () => {
    mock = await createMockServer();
    const one = clientOf();
    const first = await one.uploadImage(png);
    const [key] = await shared.redis.keys('oa:upload:*');
    await shared.redis.set(key as string, '{"url": 42}');
    const two = clientOf();
    const second = await two.uploadImage(png);
    expect(second.url).not.toBe(first.url);
    expect(uploads('image')).toBe(2);
    // The new answer replaced it.
    expect(JSON.parse((await shared.redis.get(key as string)) as string)).toEqual(second);
  });

  it('with reuseUploads: false, nothing is read from or written to Redis', async () => {
    mock = await createMockServer();
    const one = clientOf({ reuseUploads: false });
    await one.uploadImage(png);
    await one.uploadImage(png);
    expect(uploads('image')).toBe(2);
    expect(await shared.redis.keys('oa:upload:*')).toEqual([]);
  });
});
