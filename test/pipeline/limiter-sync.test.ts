import { expect, it } from 'vitest';
import { settleWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup } = clientFixture();

it('the default limiter grants a free slot at once: the request leaves in the same turn', async () => {
  // Default limits (200/min): the one call below is far from them.
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  // A first call loads undici and obtains the token, so the next one needs neither.
  expect(await client.sendText({ user_id: 'u1', msg: 'warm-up' })).toBe('success');

  let requested = false;
  client.on('request', () => {
    requested = true;
  });
  const call = client.sendText({ user_id: 'u1', msg: 'x' });
  await new Promise((resolve) => setImmediate(resolve));
  // No timer may stand between a free slot and the request (timers run after this turn's setImmediate).
  expect(requested).toBe(true);
  expect(await settleWithin(call, 5000)).toMatchObject({ ok: true, value: 'success' });
});
