// Spans of an account's client carry oa.account; metrics do not (their attribute set stays bounded).
import { afterEach, beforeAll, expect, it } from 'vitest';
import { createAccounts, type OAAccounts } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { everyMetricAttributeValue, telemetry, useContext } from '../telemetry/otel.js';

beforeAll(useContext);
let server: MockServer | undefined;
let accounts: OAAccounts | undefined;
afterEach(async () => {
  await accounts?.close();
  await server?.close();
});

it("every span of an account's client carries oa.account; no metric names the account", async () => {
  server = await createMockServer({
    accounts: [{ username: 'shop-7', apiKey: 'key-7', apiSecret: 'secret-7-abcdef' }],
  });
  const otel = telemetry();
  accounts = createAccounts({
    credentials: () => ({ apiKey: 'key-7', apiSecret: 'secret-7-abcdef' }),
    clientOptions: {
      baseUrl: server.url,
      tracerProvider: otel.tracerProvider,
      meterProvider: otel.meterProvider,
    },
  });
  await accounts.client('shop-7').sendText({ user_id: 'u', msg: 'hi' });
  const spans = otel.spans().filter((s) => s.name === 'oa sendText' || s.name === 'oa token');
  expect(spans.map((s) => s.name).sort()).toEqual(['oa sendText', 'oa token']);
  for (const span of spans) expect(span.attributes['oa.account']).toBe('shop-7');
  expect(everyMetricAttributeValue(await otel.metrics()).join('\n')).not.toContain('shop-7');
});
