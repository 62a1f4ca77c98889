// The fetch transport (`new OAClient({ fetch })`) against the fake on loopback: the same pipeline as
// undici's (tokens, 429, deadline, close(), the capped error body) and the at-most-once rule, which with
// fetch means any failure of a send after fetch was called is deliveryUnknown and not retried.
import { afterEach, describe, expect, it } from 'vitest';
import {
  OAClient,
  type OAClientOptions,
  OAConfigError,
  OAConnectionError,
  OAInternalServerError,
  OATimeoutError,
} from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejection } from '../helpers/client-fixture.js';
import { freePort } from '../helpers/ports.js';

let mock: MockServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await mock?.close();
  client = undefined;
  mock = undefined;
});

const SEND = '/webhook/broadcast-message';
const params = { user_id: 'u-1', msg: 'hello' };

async function fetchClient(options: Partial<OAClientOptions> = {}) {
  mock = await createMockServer({ rateLimit: false });
  client = new OAClient({
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
    fetch: globalThis.fetch,
    ...options,
  });
  return { mock, client };
}

const sendsSeen = (fake: MockServer) => fake.requests.filter((r) => r.path.endsWith(SEND)).length;

describe('the fetch transport', () => {
  it('sends through the given fetch: login, then the send with its headers and body', async () => {
    const seen: string[] = [];
    const counting: typeof fetch = (input, init) => {
      seen.push(String(input instanceof Request ? input.url : input));
      return fetch(input, init);
    };
    const { mock: fake, client: oa } = await fetchClient({ fetch: counting });
    expect(await oa.sendText(params)).toBe('success');
    expect(seen.map((url) => new URL(url).pathname)).toEqual([
      '/api/v2/public/auth/token',
      `/api/v2/public${SEND}`,
    ]);
    const sent = fake.requests.find((r) => r.path.endsWith(SEND));
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.headers.authorization).toMatch(/^Bearer /);
    expect(sent?.headers['user-agent']).toMatch(/^oa-messaging\/\S+ node\/v\d+/);
    expect(sent?.body).toEqual(params);
  });

  it('renews the token on a 401 and replays once', async () => {
    const { mock: fake, client: oa } = await fetchClient();
    await oa.sendText(params);
    fake.injectFault({ kind: 'error', status: 401, code: 'UNAUTHORIZED' }, { path: SEND });
    expect(await oa.sendText(params)).toBe('success');
    expect(sendsSeen(fake)).toBe(3);
    expect(
      fake.requests.filter((r) => r.path.endsWith('/auth/token') || r.path.endsWith('/refresh-token')).length,
    ).toBe(2);
  });

  it('waits out a 429 with Retry-After and sends again', async () => {
    const { mock: fake, client: oa } = await fetchClient();
    fake.injectFault({ kind: 'rate-limit', retryAfterSeconds: 1 }, { path: SEND });
    const retries: number[] = [];
    oa.on('retry', (event) => retries.push(event.waitMs));
    expect(await oa.sendText(params)).toBe('success');
    expect(retries).toEqual([1000]);
    expect(sendsSeen(fake)).toBe(2);
  });

  it('a send whose connection was reset after it arrived: deliveryUnknown, not retried, seen once', async () => {
    const { mock: fake, client: oa } = await fetchClient();
    fake.injectFault({ kind: 'reset-after-processing' }, { path: SEND });
    const error = await rejection(oa.sendText(params));
    expect(error).toBeInstanceOf(OAConnectionError);
    expect((error as OAConnectionError).deliveryUnknown).toBe(true);
    expect(error.cause).toBeInstanceOf(TypeError);
    expect(sendsSeen(fake)).toBe(1);
  });

  it('a token request to a refused port is retried, then fails as a connection error', async () => {
    const port = await freePort();
    const calls: string[] = [];
    client = new OAClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'key-123456',
      apiSecret: 'secret-abcdef',
      maxRetries: 1,
      fetch: (input, init) => {
        calls.push(String(input));
        return fetch(input, init);
      },
    });
    const retries: string[] = [];
    client.on('retry', (event) => retries.push(event.reason));
    const error = await rejection(client.generateToken());
    expect(error).toBeInstanceOf(OAConnectionError);
    expect((error as OAConnectionError).deliveryUnknown).toBe(false);
    expect(error.message).toMatch(/ECONNREFUSED/);
    expect(calls).toHaveLength(2);
    expect(retries).toHaveLength(1);
  });

  it("an attempt past timeoutMs ends with OATimeoutError; a send's is deliveryUnknown", async () => {
    const { mock: fake, client: oa } = await fetchClient({ timeoutMs: 300 });
    await oa.sendText(params);
    fake.injectFault({ kind: 'hang' }, { path: SEND });
    const started = performance.now();
    const error = await rejection(oa.sendText(params));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(OATimeoutError);
    expect((error as OATimeoutError).deliveryUnknown).toBe(true);
    expect(sendsSeen(fake)).toBe(2);
  });

  it('close() during a call ends it at once with a connection error', async () => {
    const { mock: fake, client: oa } = await fetchClient();
    await oa.sendText(params);
    fake.injectFault({ kind: 'hang' }, { path: SEND });
    const pending = rejection(oa.sendText(params));
    await expect.poll(() => sendsSeen(fake), { timeout: 5_000 }).toBe(2);
    await oa.close();
    const error = await pending;
    expect(error.message).toMatch(/may have been delivered/);
    expect((error as OAConnectionError).deliveryUnknown).toBe(true);
  });

  it('keeps only the first 64 KB of an error answer', async () => {
    const { mock: fake, client: oa } = await fetchClient();
    const page = `<html>${'x'.repeat(2 * 1024 * 1024)}</html>`;
    fake.injectFault({ kind: 'error', status: 502, body: page }, { path: SEND });
    const error = await rejection(oa.sendText(params));
    expect(error).toBeInstanceOf(OAInternalServerError);
    expect(String((error as OAInternalServerError).body).length).toBeLessThanOrEqual(64 * 1024);
    expect((error as OAInternalServerError).deliveryUnknown).toBe(true);
  });

  it('refuses fetch and dispatcher together, and a fetch that is not a function', () => {
    const base = { baseUrl: 'https://oa.example.com', apiKey: 'key-123456', apiSecret: 'secret-abcdef' };
    expect(() => new OAClient({ ...base, fetch, dispatcher: { dispatch: () => true } })).toThrowError(
      OAConfigError,
    );
    expect(() => new OAClient({ ...base, fetch: 'no' as never })).toThrowError(/fetch must be a function/);
  });
});
