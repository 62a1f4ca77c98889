import { describe, expect, it } from 'vitest';
import { OARateLimitError } from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture({ rateLimit: false });

const tooMany = { statusCode: 429, data: 'ThrottlerException: Too Many Requests' };

/** Every way a server can say "retry at once": each must still wait a short backoff and count. */
const FORMS: [string, () => Record<string, string>][] = [
  ['Retry-After: 0', () => ({ 'retry-after': '0' })],
  ['Retry-After: a past HTTP date', () => ({ 'retry-after': new Date(Date.now() - 60_000).toUTCString() })],
  ['Retry-After: -1', () => ({ 'retry-after': '-1' })],
  ['Retry-After: 0.001', () => ({ 'retry-after': '0.001' })],
  ['retry-after-ms: 0', () => ({ 'retry-after-ms': '0' })],
];

/** Few requests: the retry budget, not the server's patience, ends the call. */
const MAX_SENDS = 15;

describe.each(FORMS)('429 forever with %s', (_name, headers) => {
  const alwaysBusy = tokensThen((_req, res) => json(res, 429, tooMany, headers()));

  it('settles with OARateLimitError within the busy-wait budget, after few requests', async () => {
    const { client } = await setup(alwaysBusy, { maxBusyWaitMs: 2000 });
    const error = await rejectsWithin(client.sendText({ user_id: 'u1', msg: 'x' }), 4000);
    expect(error).toBeInstanceOf(OARateLimitError);
    expect((error as OARateLimitError).deliveryUnknown).toBe(false);
    expect(sends().length).toBeLessThan(MAX_SENDS);
  });

  it('settles within a per-call timeoutMs (the call deadline), after few requests', async () => {
    const { client } = await setup(alwaysBusy);
    const error = await rejectsWithin(
      client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 1000 }),
      2000,
    );
    expect(error).toBeInstanceOf(OARateLimitError);
    expect((error as OARateLimitError).deliveryUnknown).toBe(false);
    expect(sends().length).toBeLessThan(MAX_SENDS);
  });
});
