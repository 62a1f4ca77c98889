import { expect, it } from 'vitest';
import { isOAError } from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture();

/** Resolves once `check` holds, polling; fails the test after `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) expect.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

it('close() during a backoff ends the call at once: not sent again, deliveryUnknown false', async () => {
  const { client } = await setup(
    tokensThen((_req, res) =>
      json(res, 429, { statusCode: 429, data: 'Too Many Requests' }, { 'retry-after': '5' }),
    ),
  );
  let waiting = false;
  client.on('retry', () => {
    waiting = true;
  });
  const call = client.sendText({ user_id: 'u1', msg: 'x' });
  call.catch(() => {});
  // The 429 came back (the client said so, not a pause of ours): the call now waits 5 s before its retry.
  await until(() => waiting, 5000, 'the retry after the first send');
  await client.close();
  const error = await rejectsWithin(call, 1000, 'the call after close()');
  expect(isOAError(error)).toBe(true);
  expect((error as { deliveryUnknown: boolean }).deliveryUnknown).toBe(false);
  expect(sends()).toHaveLength(1);
});
