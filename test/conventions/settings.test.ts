import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAClient, OAConfigError, OAConnectionError } from '../../src/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { VERSION } from '../../src/version.js';
import { rejection } from '../helpers/client-fixture.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('first-run settings', () => {
  it('new OAClient() names every missing setting at once, with its environment variable', () => {
    vi.stubEnv('OA_BASE_URL', '');
    vi.stubEnv('OA_API_KEY', '');
    vi.stubEnv('OA_API_SECRET', '');
    let error: unknown;
    try {
      new OAClient();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(OAConfigError);
    expect((error as Error).message).toBe(
      'Missing baseUrl (OA_BASE_URL), apiKey (OA_API_KEY), apiSecret (OA_API_SECRET): pass them to new OAClient({ ... }) or set the environment variables',
    );
  });

  it('every option accepts an explicit undefined (exactOptionalPropertyTypes), falling back to the environment', () => {
    vi.stubEnv('OA_BASE_URL', 'https://oa.example.com');
    vi.stubEnv('OA_API_KEY', 'key');
    vi.stubEnv('OA_API_SECRET', 'secret');
    const maybe = (): string | undefined => undefined;
    const client = new OAClient({
      baseUrl: maybe(),
      apiKey: maybe(),
      apiSecret: maybe(),
      videoProbeUserId: maybe(),
      defaultHeaders: undefined,
      appInfo: undefined,
      logLevel: undefined,
    });
    expect(client).toBeInstanceOf(OAClient);
  });

  it('a connection error names the host, so a mistyped OA_BASE_URL shows', async () => {
    const client = new OAClient({
      baseUrl: 'https://oa.invalid',
      apiKey: 'key',
      apiSecret: 'secret',
      maxRetries: 0,
    });
    const error = await rejection(client.sendText({ user_id: 'u-1', msg: 'hi' }));
    await client.close();
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error.message).toMatch(/could not connect to oa\.invalid \((ENOTFOUND|EAI_AGAIN)\)/);
  });
});

describe('defaultHeaders and appInfo', () => {
  it('send the default headers and name the application in the User-Agent, on every request', async () => {
    const mock = await createMockServer();
    const client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      defaultHeaders: { 'x-trace-id': 'trace-1' },
      appInfo: { name: 'MyShop', version: '2.1.0', url: 'https://shop.example' },
    });
    try {
      await client.sendText({ user_id: 'u-1', msg: 'hi' });
      await client.uploadImage({ data: Buffer.from(PNG, 'base64'), filename: 'a.png' });
      expect(mock.requests.map((r) => r.path)).toEqual([
        '/api/v2/public/auth/token',
        '/api/v2/public/webhook/broadcast-message',
        '/api/v2/public/upload/image',
      ]);
      for (const request of mock.requests) {
        expect(request.headers['x-trace-id']).toBe('trace-1');
        expect(request.headers['user-agent']).toBe(
          `oa-messaging/${VERSION} node/${process.version} MyShop/2.1.0 (+https://shop.example)`,
        );
      }
    } finally {
      await client.close();
      await mock.close();
    }
  });

  it('refuse a default header the SDK owns, before anything is sent', () => {
    const base = { baseUrl: 'https://oa.example.com', apiKey: 'k', apiSecret: 'secret-abcdef' };
    expect(() => new OAClient({ ...base, defaultHeaders: { Authorization: 'Bearer x' } })).toThrow(
      'defaultHeaders: Authorization is set by the SDK',
    );
    expect(() => new OAClient({ ...base, defaultHeaders: { 'user-agent': 'x' } })).toThrow(/use appInfo/);
    expect(() => new OAClient({ ...base, defaultHeaders: { 'x-a': 'one\r\ntwo' } })).toThrow(OAConfigError);
    expect(() => new OAClient({ ...base, appInfo: { name: 'My Shop' } })).toThrow(/appInfo.name/);
  });
});

/** A 1x1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
