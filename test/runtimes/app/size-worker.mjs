// The Worker whose bundle size the bundle test measures: a client that sends a text and a webhook
// receiver, what a Worker on the OA API needs at the least.
import { OAClient } from 'oa-messaging';
import { createFetchWebhookHandler, getMessageText } from 'oa-messaging/webhook';

export default {
  async fetch(request, env) {
    const client = new OAClient({
      baseUrl: env.OA_BASE_URL,
      apiKey: env.OA_API_KEY,
      apiSecret: env.OA_API_SECRET,
    });
    if (new URL(request.url).pathname === '/send') {
      return Response.json(await client.sendText({ user_id: 'u1', msg: 'hello' }));
    }
    const handler = createFetchWebhookHandler({
      onEvent: (event) =>
        client.sendText({ user_id: event.data.From_Account, msg: `echo: ${getMessageText(event)}` }),
    });
    return handler(request);
  },
};
