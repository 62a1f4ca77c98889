/**
 * The CLI with a fake of several accounts: `oa mock-server --accounts N` prints each account's
 * credentials, and a send with one account's keys lands in that account; `oa inbound --account`
 * posts that account's event, shown in that account's conversation of the web inbox.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { fakeServer, oa, startOa, waitFor, workDir } from './run-oa.js';

interface State {
  account: string;
  accounts: { username: string }[];
  conversations: Record<string, { from: string; text?: string; item?: { msg?: string } }[]>;
}
const inboxState = async (url: string, account: string) =>
  (await (await request(`${url}/_inbox/state?account=${account}`)).body.json()) as State;

describe.concurrent('the CLI with several accounts', { timeout: 60_000 }, () => {
  it("oa mock-server --accounts 2 prints each account's credentials; each key sends as its account", async ({
    expect,
    onTestFinished,
  }) => {
    const running = startOa(['mock-server', '--accounts', '2', '--no-demo']);
    onTestFinished(() => void running.child.kill('SIGKILL'));
    await waitFor(expect, running.stderr, /Press Ctrl\+C/);
    const out = running.stdout();
    const url = /^Fake OA API listening at (\S+)$/m.exec(out)?.[1] ?? '';
    expect(out).toContain('2 accounts, each its own key (the env lines below use the first):');
    expect(out).toContain('  oa-account-1: OA_API_KEY=test-api-key-1 OA_API_SECRET=test-api-secret-1');
    expect(out).toContain('  oa-account-2: OA_API_KEY=test-api-key-2 OA_API_SECRET=test-api-secret-2');
    expect(out).toMatch(/^OA_API_KEY=test-api-key-1$/m);

    const env = { OA_BASE_URL: url, OA_API_KEY: 'test-api-key-2', OA_API_SECRET: 'test-api-secret-2' };
    const sent = await oa(['send', 'text', '-u', 'u-9', '-m', 'from account 2'], { env });
    expect([sent.code, sent.stderr]).toEqual([0, '']);
    const second = await inboxState(url, 'oa-account-2');
    expect(second.accounts.map((a) => a.username)).toEqual(['oa-account-1', 'oa-account-2']);
    expect(second.conversations['u-9']?.map((e) => e.item?.msg)).toEqual(['from account 2']);
    expect((await inboxState(url, 'oa-account-1')).conversations).toEqual({});
    // The request lines name the account.
    await waitFor(
      expect,
      running.stderr,
      /POST \/api\/v2\/public\/webhook\/broadcast-message 201 .*\(oa-account-2\)$/m,
    );

    const usage = await oa(['mock-server', '--accounts', '0']);
    expect(usage.code).not.toBe(0);
    expect(usage.stderr).toContain('a whole number of accounts from 1 to 50');
  });

  it("oa inbound --account posts that account's event, shown in that account's conversation", async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, {
      accounts: [
        { username: 'shop-a', apiKey: 'key-a', apiSecret: 'secret-a' },
        { username: 'shop-b', apiKey: 'key-b', apiSecret: 'secret-b' },
      ],
    });
    const events: WebhookEvent[] = [];
    const receiver = await listen(createWebhookHandler({ onEvent: (event) => void events.push(event) }));
    onTestFinished(() => receiver.close());
    const to = `${receiver.url}/oa/webhook`;
    const run = await oa(['inbound', 'text', 'Hi B', '--to', to, '--account', 'shop-b'], { env });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/^Posted a text message from user-1 to \S+ \(account shop-b\): /);
    expect(events.map((e) => e.username)).toEqual(['shop-b']);
    const b = await inboxState(mock.url, 'shop-b');
    expect(b.conversations['user-1']?.map((e) => [e.from, e.text])).toEqual([['user', 'Hi B']]);
    expect((await inboxState(mock.url, 'shop-a')).conversations).toEqual({});

    // An account the fake does not have: posted all the same, and the inbox's refusal is a notice.
    const other = await oa(['inbound', 'text', 'Hi C', '--to', to, '--account', 'shop-c'], { env });
    expect(other.code).toBe(0);
    expect(other.stderr).toMatch(/did not take the message into its web inbox \(400\)/);
  });
});

describe('oa mock-server --accounts --bot', { timeout: 60_000 }, () => {
  it('oa mock-server --accounts 2 --bot: each account answers its users through itself', async ({
    expect,
    onTestFinished,
  }) => {
    const module = join(workDir, 'accounts-echo-bot.mjs');
    await writeFile(
      module,
      `export default (client) => ({
        handle: (event) => client.sendText({ user_id: event.data.From_Account, msg: event.username + ' echo' }),
      });\n`,
    );
    const running = startOa(['mock-server', '--accounts', '2', '--no-demo', '--bot', module]);
    onTestFinished(() => void running.child.kill('SIGKILL'));
    await waitFor(expect, running.stderr, /Press Ctrl\+C/);
    const url = /^Fake OA API listening at (\S+)$/m.exec(running.stdout())?.[1] ?? '';
    const typed = await request(`${url}/_inbox/reply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: 'oa-account-2', user_id: 'u-1', kind: 'text', text: 'hi' }),
    });
    expect(typed.statusCode).toBe(200);
    await expect
      .poll(
        async () => (await inboxState(url, 'oa-account-2')).conversations['u-1']?.map((e) => e.item?.msg),
        {
          timeout: 10_000,
          interval: 100,
        },
      )
      .toContain('oa-account-2 echo');
    expect((await inboxState(url, 'oa-account-1')).conversations).toEqual({});
    // The send went out with account 2's key: its request line names it.
    await waitFor(
      expect,
      running.stderr,
      /POST \/api\/v2\/public\/webhook\/broadcast-message 201 .*\(oa-account-2\)$/m,
    );
  });
});
