import { createServer } from 'node:net';
import { expect, it } from 'vitest';
import { OAClient, OAConnectionError } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { API, clientFixture } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture();

/** A port on loopback with nothing listening (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

it('a per-call timeoutMs bounds a login that never answers; nothing is sent', async () => {
  const { client } = await setup((req, res) => {
    // The token endpoint does not answer within any deadline here (the socket is dropped later only
    // so that closing the client does not wait for it); anything else would be delivered.
    if (req.url === `${API}/auth/token`) {
      setTimeout(() => res.destroy(), 3000);
      return;
    }
    json(res, 201, { data: 'success' });
  });
  const error = await rejectsWithin(client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 300 }), 1500);
  // OATimeoutError extends OAConnectionError.
  expect(error).toBeInstanceOf(OAConnectionError);
  expect((error as OAConnectionError).deliveryUnknown).toBe(false);
  expect(sends()).toEqual([]);
});

it('a per-call timeoutMs bounds the Redis round trips when Redis is down', async ({ onTestFinished }) => {
  const { server } = await setup((_req, res) => json(res, 201, { data: 'success' }));
  const coordination = createRedisCoordination({ url: `redis://127.0.0.1:${await closedPort()}` });
  const client = new OAClient({
    baseUrl: server.url,
    apiKey: 'key-123456',
    apiSecret: 'secret-abcdef',
    coordination,
  });
  onTestFinished(async () => {
    await client.close();
    // Closing waits for ioredis to give up reconnecting (about 5 s today): not this test's subject.
    await Promise.race([coordination.close(), new Promise((resolve) => setTimeout(resolve, 1000))]);
  });
  const error = await rejectsWithin(client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 3000 }), 5000);
  expect(error).toBeInstanceOf(OAConnectionError);
  expect((error as OAConnectionError).deliveryUnknown).toBe(false);
  expect(server.hits).toEqual([]);
});
