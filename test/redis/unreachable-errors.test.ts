// What a call says when Redis refuses the connection: which feature failed, that Redis could not be
// reached, and why, for the coordination, the webhook's dedupe store and the outbox alike.
import { describe, expect, it } from 'vitest';
import { OAConnectionError } from '../../src/errors.js';
import { createOutbox } from '../../src/queue/index.js';
import { createRedisCoordination, createRedisDedupeStore } from '../../src/redis/index.js';
import { freePort } from '../helpers/ports.js';

describe('Redis refusing the connection', () => {
  it('the coordination and the dedupe store name themselves and the refused connection', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const coordination = createRedisCoordination({ url });
    const store = createRedisDedupeStore({ url });
    try {
      const token = await Promise.resolve(coordination.tokenStore.get('key-1')).catch((e: unknown) => e);
      expect(token).toBeInstanceOf(OAConnectionError);
      expect(token).toMatchObject({ deliveryUnknown: false });
      expect((token as Error).message).toBe(
        'Redis coordination: Redis could not be reached (connection refused)',
      );
      const claim = await Promise.resolve(store.claim('message-1', 'delivery-1', 1000)).catch(
        (e: unknown) => e,
      );
      expect(claim).toBeInstanceOf(OAConnectionError);
      expect((claim as Error).message).toBe(
        'webhook dedupe store: Redis could not be reached (connection refused)',
      );
    } finally {
      await coordination.close();
      await store.close();
    }
  });

  it('an outbox call says it was not connected in time, and why', async () => {
    const outbox = createOutbox({ connection: { url: `redis://127.0.0.1:${await freePort()}` } });
    try {
      const error = await outbox.counts().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as Error).message).toBe(
        'outbox.counts: Redis could not be reached (not connected within 5000 ms; connection refused)',
      );
    } finally {
      await outbox.close();
    }
  }, 15_000);
});
