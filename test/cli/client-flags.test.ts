/**
 * Every client option a command-line user may need has a flag or a variable, and every error the SDK
 * raises about its configuration is told in those flags, never in code.
 */
import { describe, expect, it } from 'vitest';
import { fakeServer, oa } from './run-oa.js';

const KEY = 'flags-key';
const SECRET = 'flags-secret-7a6b5c';
const credentials = { OA_API_KEY: KEY, OA_API_SECRET: SECRET };

describe.concurrent('client options as flags', () => {
  it('plain http to another host: the advice names --allow-insecure-http, not code', async () => {
    const { code, stderr } = await oa(['token', '--base-url', 'http://oa.example.com'], { env: credentials });
    expect(code).toBe(2);
    expect(stderr).toMatch(/^oa: --base-url http:\/\/oa\.example\.com is plain http/);
    expect(stderr).toContain('--allow-insecure-http');
    expect(stderr).not.toMatch(/allowInsecureHttp|\{ |OAClient/);
  });

  it('--allow-insecure-http and OA_ALLOW_INSECURE_HTTP=1 let plain http reach another host', async ({
    onTestFinished,
  }) => {
    // 127.0.0.2 is a loopback address that the SDK does not count as localhost.
    const { mock } = await fakeServer(onTestFinished, { apiKey: KEY, apiSecret: SECRET, host: '127.0.0.2' });
    const baseUrl = mock.url;
    expect(baseUrl).toMatch(/^http:\/\/127\.0\.0\.2:/);
    const flag = await oa(['token', '--base-url', baseUrl, '--allow-insecure-http'], { env: credentials });
    const variable = await oa(['token'], {
      env: { ...credentials, OA_BASE_URL: baseUrl, OA_ALLOW_INSECURE_HTTP: '1' },
    });
    expect([flag.code, variable.code]).toEqual([0, 0]);
    expect(mock.requests.map((r) => r.path)).toEqual([
      '/api/v2/public/auth/token',
      '/api/v2/public/auth/token',
    ]);
  });

  it('--max-retries, --max-busy-wait, --upload-timeout, --no-rate-limit and --header are in --help and reach the client', async ({
    onTestFinished,
  }) => {
    const help = await oa(['send', 'text', '--help']);
    for (const flag of [
      '--allow-insecure-http',
      '--max-retries <n>',
      '--max-busy-wait <ms>',
      '--upload-timeout <ms>',
      '--no-rate-limit',
      '--header <',
    ]) {
      expect(help.stdout).toContain(flag);
    }
    const { mock, env } = await fakeServer(onTestFinished);
    // A 429 without Retry-After: with no busy wait allowed, the command fails at once.
    mock.injectFault('rate-limit', { path: '/webhook/broadcast-message' });
    const run = await oa(
      [
        'send',
        'text',
        '-u',
        'u-1',
        '-m',
        'hi',
        '--max-busy-wait',
        '0',
        '--header',
        'X-Trace: abc-123',
        '--no-rate-limit',
      ],
      { env },
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^oa: OARateLimitError: /m);
    const sends = mock.requests.filter((r) => r.path.endsWith('/broadcast-message'));
    expect(sends).toHaveLength(1);
    expect(sends[0]?.headers['x-trace']).toBe('abc-123');
  });

  it('a value the SDK refuses names the flag', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const header = await oa(['token', '--header', 'Authorization: x'], { env });
    expect(header.code).toBe(2);
    expect(header.stderr).toMatch(/^oa: --header/);
    const malformed = await oa(['token', '--header', 'no-colon'], { env });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toMatch(/--header.*Name: value/);
    const short = await oa(['token'], { env: { ...env, OA_API_SECRET: 'abc' } });
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/^oa: --api-secret \(or OA_API_SECRET\) must be at least 6 characters/);
  });
});
