import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { fakeServer, oa } from './run-oa.js';

/** `oa` speaks the flags the user typed, never the SDK's field names; a mistake exits 2, nothing sent. */
describe.concurrent('messages that name the flags', () => {
  it('a mistyped flag is named, with the one that was meant, before any missing one', async () => {
    const run = await oa(['send', 'text', '--usr', 'u-1', '--msg', 'hi']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe("oa: unknown option '--usr'\n(Did you mean --user?)\n(add --help for usage)\n");
  });

  it('a selected or single broadcast without --user says it needs one; --target all refuses --user', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const selected = await oa(['broadcast', '--target', 'selected', '--text', 'hi'], { env });
    const single = await oa(
      ['broadcast', '--target', 'single', '--user', 'a', '--user', 'b', '--text', 'hi'],
      {
        env,
      },
    );
    const all = await oa(['broadcast', '--target', 'all', '--user', 'a', '--text', 'hi'], { env });
    expect([selected.code, single.code, all.code]).toEqual([2, 2, 2]);
    expect(selected.stderr).toBe('oa: --target selected needs at least one --user\n');
    expect(single.stderr).toBe('oa: --target single takes one --user\n');
    expect(all.stderr).toBe('oa: --target all goes to every user: drop --user, or use --target selected\n');
    expect(mock.requests).toEqual([]);
  });

  it("a value the SDK refuses is shown against its flag, or its item's place", async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const url = await oa(['send', 'image', '--user', 'u-1', '--url', 'not-a-url'], { env });
    const item = await oa(['broadcast', '--target', 'all', '--text', 'a', '--image', 'nope'], { env });
    const group = await oa(['broadcast', '--group', 'not-a-uuid', '--text', 'a'], { env });
    expect([url.code, item.code, group.code]).toEqual([2, 2, 2]);
    expect(url.stderr).toBe(
      'oa: --url: must be an absolute URL starting with http:// or https:// (nothing was sent)\n',
    );
    expect(item.stderr).toBe(
      'oa: item 2 (msg): must be an absolute URL starting with http:// or https:// (nothing was sent)\n',
    );
    expect(group.stderr).toMatch(/^oa: --group: .* \(nothing was sent\)\n$/);
    expect(mock.requests).toEqual([]);
  });
});

describe.concurrent('a busy port', () => {
  for (const command of [['mock-server'], ['webhook', 'listen']]) {
    it(`oa ${command.join(' ')} on a port in use: explained, exit 2`, async () => {
      const taken = createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const { port } = taken.address() as AddressInfo;
      try {
        const run = await oa([...command, '--port', String(port)]);
        expect(run.code).toBe(2);
        expect(run.stderr).toBe(
          `oa: 127.0.0.1:${port} is already in use (is another server running?): choose another --port, or --port 0 for any free port\n`,
        );
      } finally {
        await new Promise((resolve) => taken.close(resolve));
      }
    });
  }
});
