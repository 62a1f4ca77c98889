import { afterEach, expect, test } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';

let server: MockServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

test('a first call that logs in sends its request on the socket of the login: one socket, not two', async () => {
  server = await createMockServer({ apiKey: 'key-1', apiSecret: 'secret-1' });
  const client = new OAClient({ baseUrl: server.url, apiKey: 'key-1', apiSecret: 'secret-1' });
  await client.sendText({ user_id: 'u-1', msg: 'hello' });
  expect(server.requests.map((r) => [r.path, r.status])).toEqual([
    ['/api/v2/public/auth/token', 201],
    ['/api/v2/public/webhook/broadcast-message', 201],
  ]);
  expect(server.deliveries).toHaveLength(1);
  expect(server.connections.accepted).toBe(1);
  await client.close();
});
