// The video tickets known to be ready, shared through Redis: a sendVideo success in one process lets
// another broadcast that ticket without a probe.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { items, OAClient, OAVideoNotConfirmedError } from '../../src/index.js';
import { createRedisCoordination, type RedisClient, type RedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, redisClient, useRedisServer } from './redis-server.js';
import type { SendVideoConfig } from './send-video.js';

const SCRIPT = fileURLToPath(new URL('./send-video.ts', import.meta.url));
const clip = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));
const WEEK_MS = 7 * 86_400_000;

/** Runs send-video.ts in a process of its own; resolves with its exit code and output. */
function sendVideoElsewhere(config: SendVideoConfig): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve({ code, output });
    }),
  );
}

describe.skipIf(!REDIS_SERVER)('video tickets known to be ready, shared through Redis', () => {
  const shared = useRedisServer();
  let mock: MockServer | undefined;
  const open: { close(): Promise<void> }[] = [];

  afterEach(async () => {
    for (const item of open.splice(0).reverse()) await item.close();
    await mock?.close();
  });

  const clientWith = (coordination: RedisCoordination, logger = {}) => {
    if (!mock) throw new Error('no fake server');
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
      logger,
      // Two tickets of one clip: each upload goes out (no reuse of the first answer).
      reuseUploads: false,
    });
    open.push(coordination, client);
    return client;
  };

  it('after one sendVideo success in another process, a broadcast of that ticket needs no probe', async () => {
    mock = await createMockServer({ transcodeMs: 300 });
    const client = clientWith(createRedisCoordination({ url: shared.server.url }));
    const { ticket_id } = await client.uploadVideo(clip);
    const other = await client.uploadVideo(clip);

    const elsewhere = await sendVideoElsewhere({
      redisUrl: shared.server.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      user_id: 'first-viewer',
      ticket_id,
    });
    expect(elsewhere).toEqual({ code: 0, output: '{"result":"success"}\n' });

    // No probe user: the shared memory alone vouches for the ticket.
    await client.broadcast({ target: 'selected', user_ids: ['u1', 'u2'], items: [items.video(ticket_id)] });
    expect(mock.deliveries.map((d) => [d.endpoint, d.user_ids, d.failure])).toEqual([
      ['sendVideo', ['first-viewer'], undefined],
      ['broadcast', ['u1', 'u2'], undefined],
    ]);
    // A ticket no process has sent is still refused.
    const refused = await client
      .broadcast({ target: 'all', items: [items.video(other.ticket_id)] })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(OAVideoNotConfirmedError);
    expect(mock.deliveries).toHaveLength(2);

    const ttl = await shared.redis.pttl(`oa:video:${mock.apiKey}@${mock.url}/:${ticket_id}`);
    expect(ttl).toBeGreaterThan(WEEK_MS - 60_000);
    expect(ttl).toBeLessThanOrEqual(WEEK_MS);
  });

  it('readyVideoTtlMs and prefix name the key and its lifetime', async () => {
    mock = await createMockServer({ transcodeMs: 0 });
    const coordination = createRedisCoordination({
      url: shared.server.url,
      prefix: 'app:',
      readyVideoTtlMs: 60_000,
    });
    const client = clientWith(coordination);
    const { ticket_id } = await client.uploadVideo(clip);
    await client.sendVideo({ user_id: 'u1', ticket_id });
    const ttl = await shared.redis.pttl(`app:video:${mock.apiKey}@${mock.url}/:${ticket_id}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(() => createRedisCoordination({ url: shared.server.url, readyVideoTtlMs: 0 })).toThrow(
      /readyVideoTtlMs/,
    );
  });

  it('a Redis that cannot record the ticket: the send still succeeds, with a warning; this process remembers it', async () => {
    mock = await createMockServer({ transcodeMs: 0 });
    const redis = redisClient(shared.server.url);
    open.push({ close: async () => void (await redis.quit()) });
    const touchesVideos = (args: unknown[]) =>
      args.some((a) => typeof a === 'string' && a.includes(':video:'));
    // Token scripts work; the ready-ticket scripts fail, as on a failover.
    const failing: RedisClient = {
      eval: (script, numkeys, ...args) =>
        touchesVideos(args) ? Promise.reject(new Error('READONLY')) : redis.eval(script, numkeys, ...args),
      evalsha: (sha, numkeys, ...args) =>
        touchesVideos(args) ? Promise.reject(new Error('READONLY')) : redis.evalsha(sha, numkeys, ...args),
    };
    const warnings: string[] = [];
    const client = clientWith(createRedisCoordination({ client: failing }), {
      warn: (line: string) => warnings.push(line),
    });
    const { ticket_id } = await client.uploadVideo(clip);
    expect(await client.sendVideo({ user_id: 'u1', ticket_id })).toBe('success');
    expect(warnings).toEqual([`oa-messaging: could not share that video ticket ${ticket_id} is ready`]);
    await client.broadcast({ target: 'all', items: [items.video(ticket_id)] });
    expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendVideo', 'broadcast']);
  });
});
