// What oa-messaging/redis opens and closes: nothing at import, everything at close() (but a client of
// yours), and a clear message without ioredis.
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisCoordination } from '../../src/redis/index.js';
import { runScript } from '../helpers/run-script.js';
import { REDIS_SERVER, type RedisServer, startRedisServer } from './redis-server.js';

describe.skipIf(!REDIS_SERVER)('closing oa-messaging/redis', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('opens nothing until used, and leaves no timer or socket after close()', async () => {
    const { code, output } = await runScript(new URL('./close-script.ts', import.meta.url), [server.url]);
    expect(output).toContain('after create: handles 0, ioredis loaded false');
    expect(output).toContain('in use: ioredis loaded true');
    expect(output).toContain('queued request: OAConnectionError');
    expect(output).toContain('handles after close: 0');
    expect(code).toBe(0);
  }, 20_000);

  it('leaves a client passed in open', async () => {
    const client = new Redis(server.url);
    const coordination = createRedisCoordination({ client, prefix: 'mine:' });
    await coordination.withRenewalLock('key-1', async () => {});
    await coordination.close();
    await coordination.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    expect(await client.exists('mine:lock:key-1')).toBe(0);
    await client.quit();
  });
});
