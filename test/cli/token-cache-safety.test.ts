/**
 * The token pair `oa` keeps between commands is used only when it is safe and its own (issue 51): the
 * file is a regular file of the user's, not a pipe or a link, in a folder only the user can write; its
 * modes are tightened to 0600 and 0700; and an entry is used only with the base URL, api key and api
 * secret it was kept for, so a pair planted by someone else, or a wrong secret, misses the cache.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import { configHome, fakeServer, oa, workDir } from './run-oa.js';

const text = ['send', 'text', '-u', 'user-1', '-m', 'Hello'];

/** A config folder of the test's own (`XDG_CONFIG_HOME`), its token folder, and the one token file in it. */
function configFolder(): { env: { XDG_CONFIG_HOME: string }; dir: string; file: () => string } {
  const home = configHome();
  const dir = join(home, 'oa', 'tokens');
  const file = () => {
    const names = readdirSync(dir);
    expect(names).toHaveLength(1);
    return join(dir, names[0] as string);
  };
  return { env: { XDG_CONFIG_HOME: home }, dir, file };
}

const logins = (mock: MockServer) => mock.requests.filter((r) => r.path.endsWith('/auth/token')).length;

const twoAccounts = {
  accounts: [
    { username: 'shop-a', apiKey: 'key-a', apiSecret: 'secret-a-5f1e' },
    { username: 'shop-b', apiKey: 'key-b', apiSecret: 'secret-b-7d2c' },
  ],
};

// Two to four runs of `oa` each: a process start is seconds on a busy machine.
describe.concurrent('the kept pair is used only when safe and its own', { timeout: 90_000 }, () => {
  it('a named pipe at the file: the command neither hangs nor reads it, logs in and sends', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const file = config.file();
    rmSync(file);
    execFileSync('mkfifo', ['-m', '600', file]);
    const run = await oa(text, { env: { ...env, ...config.env }, timeoutMs: 10_000 });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(file);
    expect(run.stderr).toMatch(/not a regular file/);
    expect(mock.deliveries).toHaveLength(2);
    expect(logins(mock)).toBe(2);
    // Replaced by a file of the new pair, in the folder that is ours.
    expect(lstatSync(file).isFile()).toBe(true);
  });

  it('a link at the token folder is not followed: its target is neither tightened nor emptied', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    const elsewhere = mkdtempSync(join(workDir, 'elsewhere-'));
    chmodSync(elsewhere, 0o755);
    writeFileSync(join(elsewhere, 'notes.json'), '{}');
    mkdirSync(join(config.dir, '..'), { recursive: true });
    symlinkSync(elsewhere, config.dir);
    const run = await oa(text, { env: { ...env, ...config.env } });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/symbolic link/);
    expect(mock.deliveries).toHaveLength(1);
    expect(statSync(elsewhere).mode & 0o777).toBe(0o755);
    expect((await oa(['logout', '--all'], { env: { ...env, ...config.env } })).code).toBe(0);
    expect(readdirSync(elsewhere)).toEqual(['notes.json']);
  });

  it('a folder of mode 0755 and a file of 0644 are tightened to 0700 and 0600, and the pair used', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const file = config.file();
    chmodSync(config.dir, 0o755);
    chmodSync(file, 0o644);
    const run = await oa(text, { env: { ...env, ...config.env } });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(statSync(config.dir).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(mock.deliveries).toHaveLength(2);
    expect(logins(mock)).toBe(1);
  });

  it("a pair of another OA account planted at the file is not used: the message goes to the key's own account", async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, twoAccounts);
    const a = { ...env, OA_API_KEY: 'key-a', OA_API_SECRET: 'secret-a-5f1e' };
    const b = { ...env, OA_API_KEY: 'key-b', OA_API_SECRET: 'secret-b-7d2c' };
    // Someone with account B's pair, kept by `oa` as it keeps any, puts it under account A's file name.
    const theirs = configFolder();
    const ours = configFolder();
    expect((await oa(text, { env: { ...b, ...theirs.env } })).code).toBe(0);
    expect((await oa(text, { env: { ...a, ...ours.env } })).code).toBe(0);
    copyFileSync(theirs.file(), ours.file());
    const run = await oa([...text.slice(0, -1), 'For A'], { env: { ...a, ...ours.env } });
    expect([run.code, run.stderr]).toEqual([0, '']);
    const texts = (account: string) => mock.account(account).deliveries.map((d) => d.items[0]?.msg);
    expect(texts('shop-a')).toEqual(['Hello', 'For A']);
    expect(texts('shop-b')).toEqual(['Hello']);
    expect(mock.account('shop-a').requests.filter((r) => r.path.endsWith('/auth/token'))).toHaveLength(2);
  });

  it('--api-secret WRONG after a run with the right secret: the login is refused, nothing is sent, the pair stays', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const wrong = await oa([...text, '--api-secret', 'WRONG-secret'], { env: { ...env, ...config.env } });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^oa: OAUnauthorizedError: /);
    expect(mock.deliveries).toHaveLength(1);
    expect(logins(mock)).toBe(2);
    // A wrong secret does not log the right one out: its pair is still kept, and used.
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    expect(mock.deliveries).toHaveLength(2);
    expect(logins(mock)).toBe(2);
  });

  it('a symbolic link at the file is not followed: its target is neither read nor changed', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const file = config.file();
    // A valid pair of the same account, elsewhere: a link to it must not be read all the same.
    const target = join(workDir, `elsewhere-${process.hrtime.bigint()}.json`);
    copyFileSync(file, target);
    chmodSync(target, 0o644);
    const before = readFileSync(target, 'utf8');
    rmSync(file);
    symlinkSync(target, file);
    const run = await oa(text, { env: { ...env, ...config.env } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(file);
    expect(run.stderr).toMatch(/symbolic link/);
    expect(logins(mock)).toBe(2);
    expect(mock.deliveries).toHaveLength(2);
    expect([readFileSync(target, 'utf8'), statSync(target).mode & 0o777]).toEqual([before, 0o644]);
    expect(lstatSync(file).isFile()).toBe(true);
  });

  it('an entry of the older format, bound to no secret, is a miss: the command logs in and keeps a new one', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const file = config.file();
    const { access_token, refresh_token, token_type, obtained_at, expires_at } = JSON.parse(
      readFileSync(file, 'utf8'),
    );
    const old = { access_token, refresh_token, token_type, obtained_at, expires_at };
    writeFileSync(file, JSON.stringify(old), { mode: 0o600 });
    const run = await oa(text, { env: { ...env, ...config.env } });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(logins(mock)).toBe(2);
    expect(readFileSync(file, 'utf8')).not.toBe(JSON.stringify(old));
  });

  it('a file over 1 MiB is not read', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const config = configFolder();
    expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
    const file = config.file();
    writeFileSync(file, `${readFileSync(file, 'utf8')}${' '.repeat(2 * 1024 * 1024)}`, { mode: 0o600 });
    const run = await oa(text, { env: { ...env, ...config.env } });
    expect(run.code).toBe(0);
    expect(run.stderr).toContain(file);
    expect(run.stderr).toMatch(/larger than 1 MiB/);
    expect(logins(mock)).toBe(2);
  });

  // Only root can give a folder to another user.
  it.skipIf(process.getuid?.() !== 0)(
    "a folder of another user's is neither read nor written: one warning, the command logs in",
    async ({ onTestFinished }) => {
      const { mock, env } = await fakeServer(onTestFinished);
      const config = configFolder();
      expect((await oa(text, { env: { ...env, ...config.env } })).code).toBe(0);
      const file = config.file();
      const before = readFileSync(file, 'utf8');
      chownSync(config.dir, 65534, 65534);
      const run = await oa(text, { env: { ...env, ...config.env } });
      expect(run.code).toBe(0);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toContain(config.dir);
      expect(run.stderr).toMatch(/owned by another user/);
      expect(logins(mock)).toBe(2);
      expect(readFileSync(file, 'utf8')).toBe(before);
    },
  );
});
