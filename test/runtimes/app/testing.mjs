// Scenarios of oa-messaging/testing run inside the runtime itself (Bun and Deno): the fake server
// started there, and the msw handlers there.
import { OAClient } from 'oa-messaging';
import { createFakeOA, createMockServer } from 'oa-messaging/testing';
import { settle } from './app.mjs';

export const testingScenarios = {
  /** The fake HTTP server started in this runtime answers a sendText from a client in it. */
  async 'mock-server'() {
    const mock = await createMockServer({ rateLimit: false });
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    try {
      const sent = await settle(client.sendText({ user_id: 'u-mock', msg: 'to the fake in this runtime' }));
      return {
        ...sent,
        deliveries: mock.deliveries.map(({ endpoint, user_ids, items }) => ({ endpoint, user_ids, items })),
      };
    } finally {
      await client.close();
      await mock.close();
    }
  },

  /** msw's handlers of oa-messaging/testing/msw answer a sendText made with this runtime's fetch. */
  async msw() {
    const [{ setupServer }, { createMswHandlers }] = await Promise.all([
      import('msw/node'),
      import('oa-messaging/testing/msw'),
    ]);
    const baseUrl = 'https://oa.msw.invalid';
    const fake = createFakeOA({ rateLimit: false });
    const server = setupServer(...createMswHandlers(fake, { baseUrl }));
    server.listen({ onUnhandledRequest: 'error' });
    const client = new OAClient({
      baseUrl,
      apiKey: fake.apiKey,
      apiSecret: fake.apiSecret,
      fetch: globalThis.fetch,
    });
    try {
      const sent = await settle(client.sendText({ user_id: 'u-msw', msg: 'through msw' }));
      return {
        ...sent,
        deliveries: fake.deliveries.map(({ endpoint, user_ids }) => ({ endpoint, user_ids })),
      };
    } finally {
      await client.close();
      server.close();
    }
  },
};
