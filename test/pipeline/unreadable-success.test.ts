// A 2xx answer is the API's "done" (API.md: any 2xx status is success). When its body cannot be read,
// the call still fails (the caller gets no typed result), but for a send it must not say "not
// delivered": the message most likely went out.
import { expect, it } from 'vitest';
import { items, OAResponseValidationError } from '../../src/index.js';
import { clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture();

it('a send answered 2xx with a body that is not JSON rejects with deliveryUnknown true, sent once', async () => {
  const { client } = await setup(
    tokensThen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('OK');
    }),
  );
  const error = await rejection(client.sendText({ user_id: 'u1', msg: 'hi' }));
  expect(error).toBeInstanceOf(OAResponseValidationError);
  expect(error.deliveryUnknown).toBe(true);
  expect(sends()).toHaveLength(1);
});

it('a broadcast answered 2xx with a body its schema does not expect rejects with deliveryUnknown true', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 200, { data: { nothing: 'here' } })));
  const error = await rejection(client.broadcast({ target: 'all', items: [items.text('sale')] }));
  expect(error).toBeInstanceOf(OAResponseValidationError);
  expect(error.deliveryUnknown).toBe(true);
  expect(sends()).toHaveLength(1);
});

it('a token call answered 2xx with an unreadable body is not a delivery: deliveryUnknown false', async () => {
  const { client } = await setup((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('OK');
  });
  const error = await rejection(client.generateToken());
  expect(error).toBeInstanceOf(OAResponseValidationError);
  expect(error.deliveryUnknown).toBe(false);
});
