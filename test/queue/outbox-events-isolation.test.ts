// A worker's own listeners get the outcome object before it is written to the queue's event stream:
// what one of them does to it must not change what `outbox.on` listeners in other processes hear.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createOutbox, type OutboxDeliveredEvent } from '../../src/queue/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

describe.skipIf(!REDIS_SERVER)('outbox events isolation', () => {
  const shared = useRedisServer();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  it('a worker listener that changes its event does not change what outbox.on hears', async () => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'isolation' });
    closing.push(
      () => mock.close(),
      () => client.close(),
      () => outbox.close(),
    );
    const heard: OutboxDeliveredEvent[] = [];
    outbox.on('delivered', (event) => heard.push(event));
    const worker = outbox.work({ client });
    worker.on('delivered', (event) => {
      event.key = 'changed by a listener';
      event.result = 'changed by a listener';
    });
    await outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'real-key' });
    await expect.poll(() => heard.length, { timeout: 10_000 }).toBe(1);
    await worker.close();
    expect(heard).toEqual([{ key: 'real-key', method: 'sendText', attempt: 1, result: 'success' }]);
  });
});
