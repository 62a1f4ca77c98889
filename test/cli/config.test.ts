import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { oa, workDir } from './run-oa.js';

/**
 * Where the settings come from: a flag, else the environment, else .env (or --dotenv). The fake
 * accepts one key only, so a run that succeeds shows which source won.
 */
let mock: MockServer;
const KEY = 'the-right-key';
const SECRET = 'the-right-secret';

beforeAll(async () => {
  mock = await createMockServer({ apiKey: KEY, apiSecret: SECRET });
});
afterAll(() => mock.close());

async function dirWithEnvFile(lines: Record<string, string>, name = '.env'): Promise<string> {
  const dir = await mkdtemp(join(workDir, 'config-'));
  await writeFile(
    join(dir, name),
    Object.entries(lines)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  return dir;
}

describe.concurrent('configuration', () => {
  it('nothing configured: exit 2, naming each flag and variable', async () => {
    const { code, stderr } = await oa(['token']);
    expect(code).toBe(2);
    expect(stderr).toContain(
      'missing --base-url (or OA_BASE_URL), --api-key (or OA_API_KEY), --api-secret (or OA_API_SECRET)',
    );
  });

  it('./.env alone is enough', async () => {
    const cwd = await dirWithEnvFile({ OA_BASE_URL: mock.url, OA_API_KEY: KEY, OA_API_SECRET: SECRET });
    const { code, stdout } = await oa(['token'], { cwd });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^eyJ/);
  });

  it('the environment wins over .env, which never overrides a variable already set', async () => {
    const cwd = await dirWithEnvFile({
      OA_BASE_URL: 'http://127.0.0.1:9',
      OA_API_KEY: 'wrong',
      OA_API_SECRET: SECRET,
    });
    const { code } = await oa(['token'], { cwd, env: { OA_BASE_URL: mock.url, OA_API_KEY: KEY } });
    expect(code).toBe(0);
  });

  it('a flag wins over the environment', async () => {
    const env = { OA_BASE_URL: mock.url, OA_API_KEY: 'wrong', OA_API_SECRET: SECRET };
    const wrong = await oa(['token'], { env });
    expect(wrong.code).toBe(1);
    const right = await oa(['token', '--api-key', KEY], { env });
    expect(right.code).toBe(0);
  });

  it('--dotenv names another file; one that cannot be read is a usage error', async () => {
    const dir = await dirWithEnvFile(
      { OA_BASE_URL: mock.url, OA_API_KEY: KEY, OA_API_SECRET: SECRET },
      'oa.env',
    );
    const named = await oa(['token', '--dotenv', join(dir, 'oa.env')]);
    expect(named.code).toBe(0);
    const missing = await oa(['token', '--dotenv', join(dir, 'missing.env')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot read the env file ${join(dir, 'missing.env')} (ENOENT)`);
  });

  it('a configuration the SDK refuses is a usage error: plain http to another host', async () => {
    const { code, stderr } = await oa(['token', '--base-url', 'http://oa.example.com'], {
      env: { OA_API_KEY: KEY, OA_API_SECRET: SECRET },
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^oa: --base-url http:\/\/oa\.example\.com is plain http: .* --allow-insecure-http/,
    );
    expect(stderr).not.toContain(SECRET);
  });
});
