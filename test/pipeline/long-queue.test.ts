import { expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer, TEST_API_KEY, TEST_API_SECRET } from '../../src/testing/index.js';
import { settleWithin } from '../helpers/bounded.js';

const SENDS = 240;

it('sends queued longer than a token lives all succeed, with at most a handful of 401s', {
  timeout: 40_000,
}, async ({ onTestFinished }) => {
  // Scaled down from the API's 200/min and 1 h tokens: 240 sends at 20/s queue for 12 s, two
  // token lifetimes. The token must be taken when a send leaves the queue, not when it joins it.
  const mock = await createMockServer({ tokenLifetimeMs: 6000, rateLimit: false });
  const client = new OAClient({
    baseUrl: mock.url,
    apiKey: TEST_API_KEY,
    apiSecret: TEST_API_SECRET,
    rateLimit: { general: { max: 20, windowMs: 1000 } },
  });
  onTestFinished(async () => {
    await client.close();
    await mock.close();
  });
  let unauthorized = 0;
  client.on('response', (event) => {
    if (event.status === 401) unauthorized++;
  });

  const users = Array.from({ length: SENDS }, (_, i) => `user-${i}`);
  const outcome = await settleWithin(
    Promise.allSettled(users.map((user_id) => client.sendText({ user_id, msg: 'queued' }))),
    30_000,
    `${SENDS} queued sends`,
  );
  if (!outcome.ok) throw outcome.error;
  const failed = outcome.value.filter((r) => r.status === 'rejected');
  expect(failed.map((r) => String((r as PromiseRejectedResult).reason)).slice(0, 3)).toEqual([]);
  expect(failed).toHaveLength(0);
  expect(unauthorized).toBeLessThanOrEqual(5);
  const perUser = new Map<string, number>();
  for (const delivery of mock.deliveries) {
    for (const user of delivery.user_ids) perUser.set(user, (perUser.get(user) ?? 0) + 1);
  }
  expect(users.filter((u) => perUser.get(u) !== 1)).toEqual([]);
});
