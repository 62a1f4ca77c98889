// `bulk: true` across processes sharing a Redis coordination (each client with a coordination, so a
// connection, of its own): a reply made in one process while another's campaign fills the api key's
// quota goes out with the next free slot, ahead of the campaign's queued sends; once nothing of the
// replying process waits, the campaign goes on. Against the fake server on loopback.
import { afterEach, describe, expect, it } from 'vitest';
import { OAAbortError, OAClient } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { startCampaign, sentTexts as texts } from '../helpers/campaign.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

describe.skipIf(!REDIS_SERVER)('bulk sends in the shared rate limiter', () => {
  const shared = useRedisServer();
  const closing: { close(): Promise<unknown> }[] = [];
  afterEach(async () => {
    for (const c of closing.splice(0).reverse()) await c.close();
  });

  /** A client in a "process" of its own: its own coordination (connection) on the shared Redis. */
  const clientOf = (mock: MockServer) => {
    const coordination = createRedisCoordination({ url: shared.server.url });
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      coordination,
      rateLimit: { general: { max: 2, windowMs: 500 } },
    });
    closing.push(coordination, client);
    return client;
  };

  it("a slot freed while another process's ordinary request waits goes to it, not to a bulk one", async () => {
    // Two processes' limiters of one api key, 1 request per 2 s.
    const limiterOf = () => {
      const coordination = createRedisCoordination({ url: shared.server.url });
      closing.push(coordination);
      return coordination.createLimiter('bulk-yields-key', {
        general: { max: 1, windowMs: 2000 },
        upload: { max: 1, windowMs: 2000 },
      });
    };
    const [a, b] = [limiterOf(), limiterOf()];
    const held = await a.acquire('general');
    const order: string[] = [];
    const reply = Promise.resolve(b.acquire('general')).then((permit) => {
      order.push('reply');
      return permit;
    });
    // b's claim is in Redis (its first ask found the window full): not a pause of ours, which a new
    // connection on a loaded machine may outlast.
    await expect
      .poll(() => shared.redis.zcard('oa:limit:{bulk-yields-key}:waiting'), { timeout: 10_000, interval: 20 })
      .toBe(1);
    const campaign = Promise.resolve(a.acquire('general', { bulk: true })).then((permit) => {
      order.push('campaign');
      return permit;
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    // Not sent after all: the slot is free at once, and this process's own queue asks first.
    held.release();
    const neither = new Promise((resolve) => setTimeout(resolve, 5_000, 'neither'));
    expect(await Promise.race([reply.then(() => 'reply'), campaign.then(() => 'campaign'), neither])).toBe(
      'reply',
    );
    (await reply).release();
    (await campaign).release();
    expect(order).toEqual(['reply', 'campaign']);
  });

  it("a reply in one process goes with the next slot, ahead of another process's campaign", async () => {
    const mock = await createMockServer();
    closing.push(mock);
    const campaigner = clientOf(mock);
    const replier = clientOf(mock);
    // Both connected (and logged in) before the campaign: the reply's wait is the limiter's alone.
    await campaigner.sendText({ user_id: 'u1', msg: 'warm' });
    await replier.sendText({ user_id: 'u1', msg: 'warm' });
    const campaign = await startCampaign(mock, campaigner, { count: 6, bulk: true });
    const reply = replier.sendText({ user_id: 'u1', msg: 'reply' });
    expect(await Promise.all([...campaign, reply])).toEqual(Array(7).fill('success'));

    const order = texts(mock).filter((t) => t !== 'warm');
    const before = order.indexOf('reply');
    // Only the campaign's sends that already had their slots went before it: at most one window's.
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThanOrEqual(2);
    expect(order).toHaveLength(7);
  });

  it('a reply that gives up while it waits holds the campaign back no longer than its claim', async () => {
    const mock = await createMockServer();
    closing.push(mock);
    const campaigner = clientOf(mock);
    const replier = clientOf(mock);
    await campaigner.sendText({ user_id: 'u1', msg: 'warm' });
    // Once 2 have gone, the window is full for the next 500 ms: the reply waits.
    const campaign = await startCampaign(mock, campaigner, { count: 4, bulk: true, seen: 2 });
    const controller = new AbortController();
    const reply = replier.sendText({ user_id: 'u1', msg: 'reply' }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the user left')), 100);
    expect(await reply.catch((e: unknown) => e)).toBeInstanceOf(OAAbortError);
    const started = performance.now();
    expect(await Promise.all(campaign)).toEqual(Array(4).fill('success'));
    // The claim lapses within 2.5 s; the last two sends need one more window after that at most.
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(texts(mock)).not.toContain('reply');
  });
});
