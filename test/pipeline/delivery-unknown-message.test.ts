/**
 * A send whose delivery is unknown says so in its message, not only in `deliveryUnknown`: a 5xx, a
 * reset after the request left, a timeout with the request out. Said once; a failure that is known not
 * to have delivered (an upload's 5xx, a refused send) says nothing of it. Against the fake on loopback.
 */
import { afterEach, expect, it } from 'vitest';
import {
  OAClient,
  OAConnectionError,
  OAInternalServerError,
  OANotFoundError,
  OATimeoutError,
} from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejection } from '../helpers/client-fixture.js';

const NOTE = 'may have been delivered: check before sending again';
const SEND = '/webhook/broadcast-message';
const params = { user_id: 'user-1', msg: 'hello' };

let mock: MockServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await mock?.close();
});

async function setup(timeoutMs = 10_000) {
  mock = await createMockServer({ rateLimit: false });
  client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret, timeoutMs });
  return { mock, client };
}

const times = (text: string, part: string) => text.split(part).length - 1;

it('a 502 on a send: the message keeps the answer and says the send may have been delivered', async () => {
  const { mock, client } = await setup();
  mock.injectFault({ kind: 'error', status: 502 }, { path: SEND });
  const error = await rejection(client.sendText(params));
  expect(error).toBeInstanceOf(OAInternalServerError);
  expect(error.deliveryUnknown).toBe(true);
  expect(error.message).toMatch(/^502 .*\(POST \/api\/v2\/public\/webhook\/broadcast-message\)/);
  expect(error.message).toContain(NOTE);
  expect(times(error.message, 'may have been delivered')).toBe(1);
  expect(JSON.parse(JSON.stringify(error))).toMatchObject({ message: error.message, deliveryUnknown: true });
});

it('a reset after the send was processed, and a timeout with the request out: said once', async () => {
  const { mock, client } = await setup(400);
  mock.injectFault({ kind: 'reset-after-processing' }, { path: SEND });
  const reset = await rejection(client.sendText(params));
  expect(reset).toBeInstanceOf(OAConnectionError);
  expect(reset.deliveryUnknown).toBe(true);
  expect(reset.message).toContain(NOTE);
  expect(times(reset.message, 'may have been delivered')).toBe(1);
  mock.injectFault({ kind: 'hang' }, { path: SEND });
  const timeout = await rejection(client.sendText(params));
  expect(timeout).toBeInstanceOf(OATimeoutError);
  expect(timeout.deliveryUnknown).toBe(true);
  expect(timeout.message).toContain(NOTE);
  expect(times(timeout.message, 'may have been delivered')).toBe(1);
});

it('a failure known not to have delivered says nothing of it', async () => {
  const { mock, client } = await setup();
  mock.injectFault({ kind: 'error', status: 404 }, { path: SEND });
  const refused = await rejection(client.sendText(params));
  expect(refused).toBeInstanceOf(OANotFoundError);
  expect(refused.deliveryUnknown).toBe(false);
  expect(refused.message).not.toContain('may have been delivered');
});
