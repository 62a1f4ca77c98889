import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import { freePort } from '../helpers/ports.js';
import { fakeServer, hasNoSecret, oa } from './run-oa.js';

/** A secret of this file's own fake, distinctive enough to search the output for. */
const SECRET = 'cli-secret-5f4e3d2c1b';

/** The fake's credentials: the secret as a flag is the worst place for it, the command line itself. */
const CREDENTIALS = { apiKey: 'cli-key', apiSecret: SECRET };
const flagsFor = (mock: MockServer) => [
  '--base-url',
  mock.url,
  ...['--api-key', 'cli-key', '--api-secret', SECRET],
];
const text = ['send', 'text', '-u', 'user-1', '-m', 'Hello'];

describe.concurrent('API and network errors exit 1 with the error name, status, code and info, never a secret', () => {
  it('an error answer, even one that echoes the secret', async ({ onTestFinished }) => {
    const { mock } = await fakeServer(onTestFinished, CREDENTIALS);
    const flags = flagsFor(mock);
    mock.injectFault(
      { kind: 'error', status: 400, code: 'BAD_REQUEST', info: `user not allowed (${SECRET})` },
      { path: '/webhook/broadcast-message' },
    );
    const { code, stdout, stderr } = await oa([...text, ...flags]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^oa: OABadRequestError: /);
    expect(stderr).toMatch(/^ {2}status: 400$/m);
    expect(stderr).toMatch(/^ {2}code: {3}BAD_REQUEST$/m);
    expect(stderr).toMatch(/^ {2}info: {3}user not allowed \(.+\)$/m);
    expect(hasNoSecret(stderr, SECRET)).toBe(true);
  });

  it('--json: the error as JSON on stderr, stdout empty', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished, CREDENTIALS);
    mock.injectFault(
      { kind: 'error', status: 404, code: 'NOT_FOUND', info: 'Account provider not found' },
      { path: '/webhook/broadcast-greeting' },
    );
    const { code, stdout, stderr } = await oa(['send', 'greeting', '-u', 'user-1', '--json'], { env });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(JSON.parse(stderr)).toEqual({
      error: {
        name: 'OANotFoundError',
        message: expect.any(String),
        status: 404,
        code: 'NOT_FOUND',
        info: 'Account provider not found',
      },
    });
    expect(hasNoSecret(stderr, SECRET)).toBe(true);
  });

  it('refused credentials', async ({ onTestFinished }) => {
    const { mock } = await fakeServer(onTestFinished, CREDENTIALS);
    const flags = flagsFor(mock);
    const wrong = 'wrong-secret-1a2b3c4d';
    const { code, stdout, stderr } = await oa(['token', ...flags.slice(0, 4), '--api-secret', wrong]);
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^oa: OAUnauthorizedError: /);
    expect(stderr).toMatch(/^ {2}code: {3}UNAUTHORIZED$/m);
    expect(hasNoSecret(stderr, wrong)).toBe(true);
  });

  it('a 5xx on a send: the delivery is unknown, and oa says so', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished, CREDENTIALS);
    const flags = flagsFor(mock);
    mock.injectFault({ kind: 'error', status: 502 }, { path: '/webhook/broadcast-message' });
    const human = await oa([...text, ...flags]);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^oa: OAInternalServerError: /);
    expect(human.stderr).toContain('The message may have been delivered: check before sending it again.');
    mock.injectFault({ kind: 'error', status: 502 }, { path: '/webhook/broadcast-message' });
    const json = await oa([...text, '--json'], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr).error).toMatchObject({ status: 502, deliveryUnknown: true });
    expect(hasNoSecret(human.stderr + json.stderr, SECRET)).toBe(true);
  });

  it('--timeout bounds a request that never gets an answer', async ({ onTestFinished }) => {
    const { mock } = await fakeServer(onTestFinished, CREDENTIALS);
    const flags = flagsFor(mock);
    mock.injectFault('hang', { path: '/webhook/broadcast-message' });
    const { code, stderr } = await oa([...text, ...flags, '--timeout', '300']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/^oa: OATimeoutError: /);
    expect(hasNoSecret(stderr, SECRET)).toBe(true);
  });

  it('no server at the base URL', async () => {
    // A port nothing listens on, below those the system hands out: no other test's server can take it.
    const { code, stderr } = await oa([
      'token',
      '--base-url',
      `http://127.0.0.1:${await freePort()}`,
      ...['--api-key', 'k', '--api-secret', SECRET],
    ]);
    expect(code).toBe(1);
    // The SDK retries a connection that never opened: each wait is told on stderr.
    expect(stderr).toMatch(
      /^oa: generateToken: the connection failed before the request left; trying again in/m,
    );
    expect(stderr).toMatch(/^oa: OAConnectionError: .*ECONNREFUSED/m);
    expect(hasNoSecret(stderr, SECRET)).toBe(true);
  });

  it('a 429 is waited out and told on stderr; stdout keeps the result alone', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished, CREDENTIALS);
    mock.injectFault({ kind: 'rate-limit', retryAfterSeconds: 0 }, { path: '/webhook/broadcast-message' });
    const { code, stdout, stderr } = await oa([...text, '--json'], { env });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toBe('success');
    expect(stderr).toMatch(/^oa: sendText: rate limited \(429\); trying again in \d+\.\d s$/m);
  });
});
