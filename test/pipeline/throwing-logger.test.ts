import { expect, it } from 'vitest';
import { settleWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture();

it('a logger that throws never affects a call, nor the rate-limit slots', async () => {
  const { client } = await setup(
    tokensThen((_req, res) => json(res, 201, { data: 'success' })),
    {
      logger: {
        debug() {
          throw new Error('boom');
        },
        info() {},
        warn() {},
        error() {},
      },
      // Three slots a second: six calls need the slots of the first three back.
      rateLimit: { general: { max: 3, windowMs: 1000 } },
    },
  );
  for (let i = 0; i < 6; i++) {
    const outcome = await settleWithin(
      client.sendText({ user_id: 'u1', msg: `m${i}` }),
      5000,
      `call ${i + 1}`,
    );
    expect(outcome, `call ${i + 1}`).toMatchObject({ ok: true, value: 'success' });
  }
  expect(sends()).toHaveLength(6);
});
