import { expect, it } from 'vitest';
import { BEFORE_SEND } from '../../src/core/options.js';
import { OAConnectionError } from '../../src/index.js';
import { clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture();

it('runs once per attempt, after the slot and the token, before the request leaves', async () => {
  let calls = 0;
  const { client } = await setup(
    tokensThen((_req, res) =>
      ++calls === 1
        ? json(res, 429, { statusCode: 429, data: 'Too many' }, { 'retry-after-ms': '100' })
        : json(res, 201, { data: 'success' }),
    ),
  );
  const seen: number[] = [];
  const hook = () => {
    // The request of this attempt has not reached the server yet.
    seen.push(sends().length);
  };
  await client.sendText({ user_id: 'u1', msg: 'hi' }, { [BEFORE_SEND]: hook } as never);
  expect(seen).toEqual([0, 1]);
  expect(sends()).toHaveLength(2);
});

it('a hook that fails keeps the request from leaving: not sent, deliveryUnknown false', async () => {
  const { client } = await setup(
    tokensThen((_req, res) => json(res, 201, { data: 'success' })),
    {
      maxRetries: 0,
    },
  );
  const hook = () => Promise.reject(new Error('redis is down'));
  const error = await rejection(
    client.sendText({ user_id: 'u1', msg: 'hi' }, { [BEFORE_SEND]: hook } as never),
  );
  expect(error).toBeInstanceOf(OAConnectionError);
  expect(error.message).toMatch(/beforeSend hook failed: redis is down/);
  expect(error.deliveryUnknown).toBe(false);
  expect(sends()).toHaveLength(0);
});
