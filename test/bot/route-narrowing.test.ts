// A route (`on`, `hears`) narrows the context for its handlers only: what runs after it (through a
// handler's `next()`, or when the route passes) sees the context's own fields, and a handler still
// running after its `next()` sees the route's again.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { OAClient } from '../../src/index.js';
import { buildInboundEvent, createMockServer, type MockServer } from '../../src/testing/index.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';

let mock: MockServer;
let client: OAClient;

beforeAll(async () => {
  mock = await createMockServer();
  client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
});
afterAll(async () => {
  await client.close();
  await mock.close();
});

it('narrows elements, media and match inside the route, and gives them back beyond it', async () => {
  const seen: unknown[] = [];
  const bot = createBot({ client, sessions: false });
  bot.hears(/^hi (\w+)$/, async (ctx, next) => {
    seen.push(['hears', ctx.match?.[1], ctx.elements.length]);
    await next();
    seen.push(['hears after next', ctx.match?.[1], ctx.elements.length]);
  });
  bot.on('image', (ctx) => void seen.push(['image', ctx.media.length]));
  bot.use(async (ctx) => {
    seen.push(['last', ctx.match, 'elements' in ctx, ctx.text]);
  });
  const event = parseWebhookEvent(JSON.stringify(buildInboundEvent({ type: 'text', text: 'hi ann' })));
  await bot.handle(event);
  expect(seen).toEqual([
    ['hears', 'ann', 1],
    ['last', undefined, false, 'hi ann'],
    ['hears after next', 'ann', 1],
  ]);
  expect(mock.requests).toEqual([]);
});
