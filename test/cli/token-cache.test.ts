/**
 * `oa` keeps the token pair between commands (as gh and the Stripe CLI do): one login for many
 * commands, in a file only the user can read, keyed by base URL and api key, never holding the secret;
 * `oa logout` removes it; a pair the server refuses is renewed as in one process.
 */
import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import { freePort } from '../helpers/ports.js';
import { configHome, fakeServer, oa, workDir } from './run-oa.js';

const SECRET = 'cache-secret-9c8b7a6d';
const KEY = 'cache-key';
const text = ['send', 'text', '-u', 'user-1', '-m', 'Hello'];

/** A config folder of the test's own, as `XDG_CONFIG_HOME`, and the token files in it. */
function configFolder(): { env: { XDG_CONFIG_HOME: string }; files: () => string[] } {
  const home = configHome();
  const dir = join(home, 'oa', 'tokens');
  const files = () => {
    try {
      return readdirSync(dir).map((name) => join(dir, name));
    } catch {
      return [];
    }
  };
  return { env: { XDG_CONFIG_HOME: home }, files };
}

const logins = (mock: MockServer) => mock.requests.filter((r) => r.path.endsWith('/auth/token')).length;

// Four to six runs of `oa` each: a process start is seconds on a busy machine.
describe.concurrent('the token pair kept between commands', { timeout: 90_000 }, () => {
  it('two commands, one login; the file is 0600, in a 0700 folder, with no secret and no api key', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, { apiKey: KEY, apiSecret: SECRET });
    const config = configFolder();
    const first = await oa(text, { env: { ...env, ...config.env } });
    const second = await oa([...text.slice(0, -1), 'Again'], { env: { ...env, ...config.env } });
    expect([first.code, second.code, first.stderr, second.stderr]).toEqual([0, 0, '', '']);
    expect(mock.deliveries).toHaveLength(2);
    expect(logins(mock)).toBe(1);
    const [file, ...others] = config.files();
    expect(others).toEqual([]);
    expect(file).toBeDefined();
    expect(statSync(file as string).mode & 0o777).toBe(0o600);
    expect(statSync(join(file as string, '..')).mode & 0o777).toBe(0o700);
    const content = readFileSync(file as string, 'utf8');
    expect(content).not.toContain(SECRET);
    expect(content).not.toContain(KEY);
    expect(file).not.toContain(KEY);
    expect(JSON.parse(content)).toMatchObject({ access_token: expect.any(String), token_type: 'Bearer' });
  });

  it('OA_CONFIG_DIR overrides the folder; oa logout removes the pair, and the next command logs in', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, { apiKey: KEY, apiSecret: SECRET });
    const dir = mkdtempSync(join(workDir, 'oa-config-'));
    const all = { ...env, OA_CONFIG_DIR: dir };
    expect((await oa(text, { env: all })).code).toBe(0);
    expect(readdirSync(join(dir, 'tokens'))).toHaveLength(1);
    const logout = await oa(['logout'], { env: all });
    expect(logout.code).toBe(0);
    expect(logout.stdout).toMatch(/^Logged out of http:\/\/127\.0\.0\.1:\d+/);
    expect(readdirSync(join(dir, 'tokens'))).toEqual([]);
    expect((await oa(text, { env: all })).code).toBe(0);
    expect(logins(mock)).toBe(2);
    expect(JSON.parse((await oa(['logout', '--all', '--json'], { env: all })).stdout)).toEqual({
      removed: 1,
    });
    expect(readdirSync(join(dir, 'tokens'))).toEqual([]);
  });

  it('another api key or another base URL does not use the pair', async ({ onTestFinished }) => {
    const config = configFolder();
    const { mock, env } = await fakeServer(onTestFinished, { apiKey: KEY, apiSecret: SECRET });
    const other = await fakeServer(onTestFinished, { apiKey: 'other-key', apiSecret: SECRET });
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    // The same base URL, another key: its own login.
    const otherKey = { ...env, OA_API_KEY: 'other-key', ...config.env };
    mock.reset();
    const refused = await oa(text, { env: otherKey });
    expect(refused.code).toBe(1);
    expect(logins(mock)).toBe(1);
    expect(mock.deliveries).toHaveLength(0);
    // Another base URL, the same key name: its own pair too.
    expect((await oa(text, { env: { ...other.env, ...config.env } })).code).toBe(0);
    expect(logins(other.mock)).toBe(1);
    expect(config.files()).toHaveLength(2);
  });

  it('a kept pair the server refuses is renewed, and the renewed pair kept', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished, { apiKey: KEY, apiSecret: SECRET });
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const before = readFileSync(config.files()[0] as string, 'utf8');
    mock.expireAccessTokens();
    const after = await oa(text, { env: { ...env, ...config.env } });
    expect(after.code).toBe(0);
    expect(mock.deliveries).toHaveLength(2);
    expect(readFileSync(config.files()[0] as string, 'utf8')).not.toBe(before);
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const renewals = mock.requests.filter((r) => /\/auth\/(token|refresh-token)$/.test(r.path));
    expect(renewals).toHaveLength(2);
  });

  it("a test's runs keep no pair for the next test: a fake on the port an ended one freed gets no stale token", async ({
    onTestFinished,
  }) => {
    // A port below those of outgoing connections, so that no connection takes it in between.
    const port = await freePort();
    const ended = await fakeServer(onTestFinished, { port });
    expect((await oa(text, { env: ended.env })).code).toBe(0);
    await ended.mock.close();
    // As a later test's fake would, when the system hands it the same port.
    const { mock, env } = await fakeServer(onTestFinished, { port });
    const run = await oa(text, { env });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(mock.requests.map((r) => `${r.path.replace(/^.*\/public/, '')} ${r.status}`)).toEqual([
      '/auth/token 201',
      '/webhook/broadcast-message 201',
    ]);
  });
});
