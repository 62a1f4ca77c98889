/**
 * `oa mock-server` as a first-day user meets it: a demo directory of users, groups and member sessions
 * (or one of their own, from flags or a JSON file), and one line per request in the terminal.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import { DEMO_MEMBERS } from '../../src/testing/index.js';
import { oa, type Started, startOa, waitFor, workDir } from './run-oa.js';

/** Starts a server of the test's own (the tests run concurrently), stopped when the test ends. */
async function start(
  onTestFinished: (fn: OnTestFinishedHandler) => void,
  args: string[],
): Promise<{ url: string; env: Record<string, string>; running: Started }> {
  const running = startOa(['mock-server', ...args]);
  onTestFinished(() => void running.child.kill('SIGKILL')); // a no-op once it has ended
  await waitFor(expect, running.stderr, /Press Ctrl\+C/);
  const url = /^Fake OA API listening at (\S+)$/m.exec(running.stdout())?.[1] ?? '';
  const env = { OA_BASE_URL: url, OA_API_KEY: 'test-api-key', OA_API_SECRET: 'test-api-secret' };
  return { url, env, running };
}

interface InboxState {
  broadcasts: { target: string; recipients: string[] }[];
  members: unknown;
}
const inboxState = async (url: string) =>
  (await (await request(`${url}/_inbox/state`)).body.json()) as InboxState;

describe('oa mock-server: who is in the groups and member sessions', () => {
  it('comes with a demo directory, printed on startup; a group broadcast reaches its members', async ({
    onTestFinished,
  }) => {
    const { url, env, running } = await start(onTestFinished, []);
    const [group, members] = Object.entries(DEMO_MEMBERS.groups ?? {})[0] ?? [];
    const stderr = running.stderr() ?? '';
    expect(stderr).toContain(`group ${group}: ${members?.join(', ')}`);
    for (const [session, users] of Object.entries(DEMO_MEMBERS.memberSessions ?? {})) {
      expect(stderr).toContain(`member session ${session}: ${users.join(', ')}`);
    }
    expect(stderr).toContain(`users: ${DEMO_MEMBERS.all?.join(', ')}`);
    const sent = await oa(['broadcast', '--group', String(group), '--text', 'Hello group'], { env });
    expect(sent.code).toBe(0);
    const state = await inboxState(url);
    expect(state.members).toEqual(DEMO_MEMBERS);
    expect(state.broadcasts.map((b) => [b.target, b.recipients])).toEqual([['group', members]]);
  });

  it('--group ID=USERS, --member-session ID=USERS and --user replace the demo directory', async ({
    onTestFinished,
  }) => {
    const group = '11111111-2222-4333-8444-555555555555';
    const session = '66666666-7777-4888-9999-aaaaaaaaaaaa';
    const { url, env, running } = await start(onTestFinished, [
      ...['--user', 'ann', '--user', 'bob', '--group', `${group}=ann,bob`],
      ...['--member-session', `${session}=bob`],
    ]);
    expect(running.stderr()).toContain(`group ${group}: ann, bob`);
    await oa(['broadcast', '--member-session', session, '--text', 'Hi'], { env });
    await oa(['broadcast', '--target', 'all', '--text', 'Hi all'], { env });
    const state = await inboxState(url);
    expect(state.members).toEqual({
      all: ['ann', 'bob'],
      groups: { [group]: ['ann', 'bob'] },
      memberSessions: { [session]: ['bob'] },
    });
    expect(state.broadcasts.map((b) => b.recipients)).toEqual([['bob'], ['ann', 'bob']]);
  });

  it('--members FILE reads the directory from JSON; a bad file or --group value is a usage error', async ({
    onTestFinished,
  }) => {
    const file = join(workDir, 'members.json');
    const group = '11111111-2222-4333-8444-555555555555';
    await writeFile(file, JSON.stringify({ all: ['x'], groups: { [group]: ['x'] } }));
    const { url } = await start(onTestFinished, ['--members', file]);
    expect((await inboxState(url)).members).toEqual({ all: ['x'], groups: { [group]: ['x'] } });

    const bad = join(workDir, 'bad-members.json');
    await writeFile(bad, JSON.stringify({ groups: { [group]: 'x' } }));
    const refused = await oa(['mock-server', '--members', bad]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^oa: .*bad-members\.json: groups\..*: .*list of user ids/m);
    const flag = await oa(['mock-server', '--group', 'no-equals-sign']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--group.*ID=USER,USER/);
  });

  it('--help lists the directory flags', async () => {
    const help = await oa(['mock-server', '--help']);
    for (const flag of ['--members <file>', '--group <', '--member-session <', '--user <', '--no-demo']) {
      expect(help.stdout).toContain(flag);
    }
  });
});

describe('oa mock-server: one line per request', () => {
  it('method, path, status, fault and ms of each request, on stderr', async ({ onTestFinished }) => {
    const { url, env, running } = await start(onTestFinished, []);
    await oa(['send', 'text', '-u', 'user-1', '-m', 'Hello'], { env });
    await request(`${url}/_inbox/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'error', status: 503, times: 1 }),
    });
    await oa(['send', 'text', '-u', 'user-1', '-m', 'Again'], { env });
    await waitFor(expect, running.stderr, /503/);
    const lines = (running.stderr() ?? '').split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} POST \/api\/v2\/public\/auth\/token 201 \d+ ms$/),
        expect.stringMatching(
          /^\d\d:\d\d:\d\d\.\d{3} POST \/api\/v2\/public\/webhook\/broadcast-message 201 \d+ ms$/,
        ),
        expect.stringMatching(
          /^\d\d:\d\d:\d\d\.\d{3} POST \/api\/v2\/public\/webhook\/broadcast-message 503 fault: error \d+ ms$/,
        ),
      ]),
    );
    // The inbox page's own requests are not the SDK's traffic.
    expect(lines.some((line) => line.includes('/_inbox/'))).toBe(false);
  });

  it('--quiet: no request lines', async ({ onTestFinished }) => {
    const { env, running } = await start(onTestFinished, ['--quiet']);
    await oa(['token'], { env });
    expect(running.stderr()).not.toMatch(/auth\/token/);
  });
});

describe('oa mock-server --bot: chat with a bot in the web inbox', () => {
  const postJson = (url: string, body: unknown) =>
    request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it('runs the module behind the fake webhook: a message typed as a user gets the bot reply', async ({
    onTestFinished,
  }) => {
    // A module whose default export makes a bot from the client it is given (the shape createBot returns).
    const module = join(workDir, 'echo-bot.mjs');
    await writeFile(
      module,
      `export default (client) => ({
        handle: (event) => client.sendText({ user_id: event.data.From_Account, msg: 'echo: ' + event.data.MsgBody[0].MsgContent.Text }),
      });\n`,
    );
    const { url, running } = await start(onTestFinished, ['--bot', module]);
    expect(running.stderr()).toMatch(
      /Bot .*echo-bot\.mjs answers what you type there \(its webhook: http:\/\/127\.0\.0\.1:\d+\/oa\/webhook\)/,
    );
    const sent = await postJson(`${url}/_inbox/reply`, {
      user_id: 'user-2',
      kind: 'text',
      text: 'hello bot',
    });
    expect(sent.statusCode).toBe(200);
    // The reply is in the user's conversation, as the page shows it.
    await expect
      .poll(async () => JSON.stringify(await inboxState(url)), { timeout: 10_000, interval: 100 })
      .toContain('echo: hello bot');
  });

  it("a handler that throws: its error's message and where it was thrown are printed", async ({
    onTestFinished,
  }) => {
    const module = join(workDir, 'failing-bot.mjs');
    await writeFile(
      module,
      `function lookUpOrder() {
        throw new TypeError('the order database is down');
      }
      export default () => ({ handle: async () => lookUpOrder() });\n`,
    );
    const { url, running } = await start(onTestFinished, ['--bot', module]);
    const sent = await postJson(`${url}/_inbox/reply`, { user_id: 'user-2', kind: 'text', text: 'order?' });
    expect(sent.statusCode).toBe(200);
    await waitFor(expect, running.stderr, /onEvent threw \(500\)/);
    const printed = running.stderr().slice(running.stderr().indexOf('onEvent threw'));
    expect(printed).toMatch(/TypeError: the order database is down/);
    expect(printed).toMatch(/at lookUpOrder \(.*failing-bot\.mjs:2:\d+\)/);
  });

  it('a missing module, or one without a default bot factory, is a usage error naming --bot', async () => {
    const missing = await oa(['mock-server', '--bot', join(workDir, 'nope.mjs')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^oa: --bot .*nope\.mjs: no such file/m);
    const plain = join(workDir, 'plain.mjs');
    await writeFile(plain, 'export const x = 1;\n');
    const refused = await oa(['mock-server', '--bot', plain]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/default export must be a function \(client\) => bot/);
    const both = await oa(['mock-server', '--bot', plain, '--webhook', 'http://127.0.0.1:9/x']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--bot and --webhook/);
  });
});
