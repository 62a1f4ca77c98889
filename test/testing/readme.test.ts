/** The example of docs/testing.md ("Testing your integration"), kept running. */
import { createServer, type Server } from 'node:http';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { OAClient, type OAError } from '../../src/index.js';
import { createMockServer, type MockServer, sendInboundMessage } from '../../src/testing/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';

let mock: MockServer;
let client: OAClient;
beforeEach(async () => {
  mock = await createMockServer({ transcodeMs: 100 });
  client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
});
afterEach(async () => {
  await client.close();
  await mock.close();
});

it('welcomes a user exactly once, even when the connection drops', async () => {
  mock.injectFault('reset-after-processing', { path: '/webhook/broadcast-message' });
  const error = (await client.sendText({ user_id: 'user-1', msg: 'Welcome!' }).catch((e) => e)) as OAError;
  expect(error.deliveryUnknown).toBe(true);
  expect(mock.deliveries).toMatchObject([{ endpoint: 'sendText', user_ids: ['user-1'] }]);
});

it('drives my webhook receiver', async () => {
  const received: WebhookEvent[] = [];
  const handler = createWebhookHandler({ onEvent: (event) => void received.push(event) });
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  try {
    const reply = await sendInboundMessage(`http://127.0.0.1:${port}/oa/webhook`, {
      type: 'text',
      text: 'hi',
    });
    expect(reply.status).toBe(200);
    expect(received[0]).toMatchObject({
      data: { MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' } }] },
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
