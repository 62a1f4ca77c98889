// Two webhook handlers (two node:http servers) sharing the Redis dedupe store with claimTtlMs 300: an
// onEvent of 1.5 s keeps its claim, so the redelivery that reaches the other handler at 800 ms waits
// for it instead of running onEvent again; a claim nobody extends is still taken over.
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisDedupeStore, type RedisDedupeStore } from '../../src/redis/index.js';
import { dedupeKeyOf } from '../../src/webhook/dedupe.js';
import { createWebhookHandler, parseWebhookEvent, type WebhookEvent } from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { type Listening, listen } from '../helpers/listen.js';
import { post, recordingLogger, slowFirstDelivery, textEvent } from '../webhook/support.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

describe.skipIf(!REDIS_SERVER)('a slow onEvent behind two handlers sharing Redis', () => {
  const shared = useRedisServer();
  let stores: RedisDedupeStore[] = [];
  let servers: Listening[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await Promise.all(stores.map((store) => store.close()));
    servers = [];
    stores = [];
  });

  /** Two handlers, each with its own connection to the shared Redis, as two instances would have. */
  async function twoHandlers(onEvent: (event: WebhookEvent) => Promise<void> | void) {
    const { lines, logger } = recordingLogger();
    stores = [0, 1].map(() => createRedisDedupeStore({ url: shared.server.url }));
    servers = await Promise.all(
      stores.map((store) =>
        listen(createWebhookHandler({ logger, onEvent, dedupe: { store, claimTtlMs: 300 } })),
      ),
    );
    return { urls: servers.map((server) => `${server.url}/hook`), lines };
  }

  const body = JSON.stringify(textEvent('slow downstream', 11));

  it('onEvent of 1.5 s, a redelivery to the other handler at 800 ms: onEvent runs once in all', async () => {
    const slow = slowFirstDelivery(1_500);
    const { urls, lines } = await twoHandlers(slow.onEvent);
    const { first, again, calls } = await slow.redeliver(
      () => post(urls[0]!, body),
      () => post(urls[1]!, body),
      800,
    );
    expect(first).toMatchObject({ status: 200, json: { ok: true } });
    expect(again).toMatchObject({ status: 200, json: { ok: true, duplicate: true } });
    expect(calls).toBe(1);
    expect(lines.filter((line) => line.level === 'error' || line.level === 'warn')).toEqual([]);
    expect(await shared.redis.get(`oa:dedupe:${dedupeKeyOf(parseWebhookEvent(body))}`)).toBe('done');
  });

  it('a claim that nobody extends (its holder died) is taken over after claimTtlMs', async () => {
    let calls = 0;
    const { urls } = await twoHandlers(() => void calls++);
    const key = dedupeKeyOf(parseWebhookEvent(body))!;
    expect(await stores[0]!.claim(key, 'a delivery whose process died', 300)).toBe('claimed');
    const answer = await settleWithin(post(urls[1]!, body), 5_000, 'the redelivery');
    expect(answer).toMatchObject({ ok: true, value: { status: 200, json: { ok: true } } });
    expect(calls).toBe(1);
    expect(await shared.redis.get(`oa:dedupe:${key}`)).toBe('done');
  });
});
