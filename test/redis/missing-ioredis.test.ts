// Without ioredis installed, `{ url }` fails on first use with a message that says what to install.
import { describe, expect, it, vi } from 'vitest';
import { OAConfigError } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';

vi.mock('ioredis', () => {
  throw Object.assign(new Error("Cannot find package 'ioredis'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('oa-messaging/redis without ioredis', () => {
  it('creates fine, and says to npm install ioredis on first use', async () => {
    const coordination = createRedisCoordination({ url: 'redis://127.0.0.1:1' });
    const error = await Promise.resolve(coordination.tokenStore.get('key-1')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAConfigError);
    expect((error as Error).message).toContain('npm install ioredis');
    await expect(coordination.withRenewalLock('key-1', async () => {})).rejects.toBeInstanceOf(OAConfigError);
    await coordination.close();
  });
});
