// What an outbox state tells an operator: `unknown` = may have been delivered (whatever the cause),
// `failed` = certainly not delivered. `get`, `counts` and the events say the same.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createOutbox, type OutboxEventName, type OutboxEvents } from '../../src/queue/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

type Seen = { [E in OutboxEventName]: [E, OutboxEvents[E]] }[OutboxEventName];

describe.skipIf(!REDIS_SERVER)('outbox states', () => {
  const shared = useRedisServer();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  it('a live call that rejected with deliveryUnknown ends unknown, a verdict of the API failed', async () => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'states' });
    closing.push(
      () => mock.close(),
      () => client.close(),
      () => outbox.close(),
    );
    const text = '/webhook/broadcast-message';
    // One send at a time: each fault hits the send it is meant for.
    mock.injectFault({ kind: 'reset-after-processing' }, { path: text });
    mock.injectFault(500, { path: text });
    mock.injectFault({ kind: 'error', status: 400, code: 'BAD_REQUEST' }, { path: text });
    await outbox.add('sendText', { user_id: 'u1', msg: 'reset' }, { key: 'reset' });
    await outbox.add('sendText', { user_id: 'u1', msg: '500' }, { key: 'five-hundred' });
    await outbox.add('sendText', { user_id: 'u1', msg: 'bad' }, { key: 'bad' });

    const seen: Seen[] = [];
    const worker = outbox.work({ client, concurrency: 1 });
    closing.push(() => worker.close());
    for (const name of ['delivered', 'retry', 'failed', 'unknown'] as const) {
      worker.on(name, (event: OutboxEvents[typeof name]) => seen.push([name, event] as Seen));
    }
    await expect.poll(() => seen.length, { timeout: 15_000 }).toBe(3);

    // The reset one was delivered, the 500 one not: the worker cannot tell, nor can the operator.
    expect(mock.deliveries.map((d) => d.items[0]?.msg)).toEqual(['reset']);
    const byKey = Object.fromEntries(seen.map(([name, event]) => [event.key, name]));
    expect(byKey).toEqual({ reset: 'unknown', 'five-hundred': 'unknown', bad: 'failed' });
    expect(await outbox.counts()).toMatchObject({ delivered: 0, failed: 1, unknown: 2 });

    const reset = await outbox.get('reset');
    expect(reset).toMatchObject({
      state: 'unknown',
      error: { name: 'OAConnectionError', deliveryUnknown: true, record: { pid: process.pid } },
    });
    expect(await outbox.get('five-hundred')).toMatchObject({
      state: 'unknown',
      error: { status: 500, deliveryUnknown: true },
    });
    const bad = await outbox.get('bad');
    expect(bad).toMatchObject({ state: 'failed', error: { status: 400 } });
    expect(bad?.error?.deliveryUnknown).toBeUndefined();
    // Each event carries the error as `get` keeps it.
    for (const [, event] of seen) {
      expect((event as OutboxEvents['unknown']).error).toEqual((await outbox.get(event.key))?.error);
    }
  });
});
