// `bulk: true` (a campaign's send) yields in the client's rate limiter: a send without it, made while
// a campaign fills the quota, goes out with the next free slot, ahead of the campaign's queued sends.
// Against the fake server on loopback; what it received, in order, is asserted.
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient, OAValidationError } from '../../src/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { startCampaign, sentTexts as texts } from '../helpers/campaign.js';

const closing: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const c of closing.splice(0).reverse()) await c.close();
});

/** The fake and a client of it limited to 2 requests per 400 ms, warmed up (logged in, one text sent). */
async function limited() {
  const mock = await createMockServer();
  const client = new OAClient({
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
    rateLimit: { general: { max: 2, windowMs: 400 } },
  });
  closing.push(mock, client);
  // The login takes a slot too; once it is back, the campaign fills the window and queues.
  await client.sendText({ user_id: 'u1', msg: 'warm' });
  return { mock, client };
}

describe('bulk sends in the rate limiter', () => {
  it('a reply made while a campaign fills the quota goes with the next slot, ahead of the campaign', async () => {
    const { mock, client } = await limited();
    const campaign = await startCampaign(mock, client, { count: 6, bulk: true });
    const reply = client.sendText({ user_id: 'u1', msg: 'reply' });
    expect(await Promise.all([...campaign, reply])).toEqual(Array(7).fill('success'));

    const order = texts(mock).filter((t) => t !== 'warm');
    const before = order.indexOf('reply');
    // Only the campaign's sends that already had their slots went before it: at most one window's.
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThanOrEqual(2);
    expect(order.filter((t) => t.startsWith('campaign'))).toEqual(
      Array.from({ length: 6 }, (_, i) => `campaign ${i}`),
    );
  });

  it('without bulk, the same reply waits behind the whole queue (first in, first out)', async () => {
    const { mock, client } = await limited();
    const campaign = await startCampaign(mock, client, { count: 6, bulk: false });
    const reply = client.sendText({ user_id: 'u1', msg: 'reply' });
    await Promise.all([...campaign, reply]);
    expect(texts(mock).at(-1)).toBe('reply');
  });

  it('bulk must be true or false: OAValidationError, nothing sent', async () => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    closing.push(mock, client);
    const error = await client
      .sendText({ user_id: 'u1', msg: 'x' }, { bulk: 'yes' as never })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAValidationError);
    expect((error as Error).message).toContain('bulk: must be true or false');
    expect(mock.requests).toEqual([]);
  });
});
