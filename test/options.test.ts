import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAClient, OAConfigError } from '../src/index.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

const creds = { apiKey: 'key-123456', apiSecret: 'secret-abcdef' };

describe('client options', () => {
  it('refuses plain http to another host, so tokens never travel in clear by accident', () => {
    expect(() => new OAClient({ baseUrl: 'http://oa.example.com', ...creds })).toThrow(OAConfigError);
    expect(() => new OAClient({ baseUrl: 'http://oa.example.com', ...creds })).toThrow(/allowInsecureHttp/);
    expect(() => new OAClient({ baseUrl: 'http://10.0.0.5:8080', ...creds })).toThrow(OAConfigError);
  });

  it('accepts https, loopback http, and plain http when the caller opts in', () => {
    for (const baseUrl of [
      'https://oa.example.com',
      'http://localhost:3000',
      'http://127.0.0.1:3000',
      'http://[::1]:3000',
    ]) {
      expect(() => new OAClient({ baseUrl, ...creds })).not.toThrow();
    }
    expect(
      () => new OAClient({ baseUrl: 'http://oa.internal', allowInsecureHttp: true, ...creds }),
    ).not.toThrow();
  });

  it('refuses what is not an http(s) URL', () => {
    expect(() => new OAClient({ baseUrl: 'oa.example.com', ...creds })).toThrow(/not a URL/);
    expect(() => new OAClient({ baseUrl: 'ftp://oa.example.com', ...creds })).toThrow(OAConfigError);
    expect(() => new OAClient({ baseUrl: 'https://oa.example.com?x=1', ...creds })).toThrow(OAConfigError);
  });

  it('falls back to OA_BASE_URL, OA_API_KEY and OA_API_SECRET', () => {
    vi.stubEnv('OA_BASE_URL', 'https://oa.example.com');
    vi.stubEnv('OA_API_KEY', 'env-key');
    vi.stubEnv('OA_API_SECRET', 'env-secret');
    expect(() => new OAClient()).not.toThrow();
  });

  it('names what is missing, and never the secret', () => {
    vi.stubEnv('OA_BASE_URL', '');
    vi.stubEnv('OA_API_KEY', '');
    vi.stubEnv('OA_API_SECRET', '');
    expect(() => new OAClient({ apiKey: 'k', apiSecret: 's' })).toThrow(/Missing baseUrl \(OA_BASE_URL\):/);
    expect(() => new OAClient({ baseUrl: 'https://x.example', apiSecret: 's' })).toThrow(/Missing apiKey/);
    expect(() => new OAClient({ baseUrl: 'https://x.example', apiKey: 'k' })).toThrow(/Missing apiSecret/);
  });

  it('refuses negative or non-numeric limits', () => {
    expect(() => new OAClient({ baseUrl: 'https://x.example', ...creds, timeoutMs: -1 })).toThrow(
      /timeoutMs/,
    );
    expect(() => new OAClient({ baseUrl: 'https://x.example', ...creds, maxRetries: Number.NaN })).toThrow(
      /maxRetries/,
    );
  });
});
