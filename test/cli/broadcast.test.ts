import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { endTranscodesOnceWaitedFor } from '../helpers/transcode.js';
import { fakeServer, oa, workDir } from './run-oa.js';

const GROUP = '0b7e4a52-2a8e-4b6e-9d55-3f1b7c1e9a10';
const SESSION = '5d1c2b8e-7f4a-4c3d-8e9f-1a2b3c4d5e6f';
const TICKET = '9f8e7d6c-5b4a-4321-8fed-cba987654321';
const clip = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));
/** A short transcode: the probe may meet the convert status. */
const CONVERTS_BRIEFLY = { transcodeMs: 800 };
/** Longer than any test. */
const CONVERTS_LONG = { transcodeMs: 60_000 };

describe.concurrent('oa broadcast', () => {
  it('--target all with items from flags, in the order given, --desc and --link refining the one before', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const { code, stdout, stderr } = await oa(
      [
        'broadcast',
        ...['--target', 'all'],
        ...['--text', 'Spring sale', '--desc', 'Push text'],
        ...['--image', 'https://cdn.example.com/a.png', '--link', 'https://shop.example.com'],
        ...['--video', TICKET],
        ...['--flex', '{"type":"bubble"}'],
        ...['--image', 'https://cdn.example.com/b.png'],
        // The video is a ticket_id of no upload: broadcast at once, without the wait.
        '--no-wait',
      ],
      { env },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^broadcast [\w-]+: 5 items \(message, oa_image_link, video, flex, image\)\nestimated job time: 0 min\n$/,
    );
    expect(mock.deliveries).toMatchObject([{ endpoint: 'broadcast', target: 'all', user_ids: [] }]);
    expect(mock.deliveries[0]?.items).toEqual([
      { type: 'message', msg: 'Spring sale', desc: 'Push text' },
      { type: 'oa_image_link', msg: 'https://cdn.example.com/a.png', link: 'https://shop.example.com' },
      { type: 'video', msg: TICKET },
      { type: 'flex', msg: '{"type":"bubble"}' },
      { type: 'image', msg: 'https://cdn.example.com/b.png' },
    ]);
  });

  it('--target selected and single name their users; --json prints the broadcast record', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const selected = await oa(
      ['broadcast', '--target', 'selected', '--user', 'u1', '--user', 'u2', '--text', 'Hi', '--json'],
      { env },
    );
    expect(selected.code).toBe(0);
    const record = JSON.parse(selected.stdout);
    expect(record).toMatchObject({ id: expect.any(String), data: [{ type: 'message', msg: 'Hi' }] });
    expect(record.estimate_time_detail.total_job_time_minutes).toBe(0);
    const single = await oa(['broadcast', '--target', 'single', '--user', 'u3', '--text', 'Hi'], { env });
    expect(single.code).toBe(0);
    expect(mock.deliveries.map((d) => [d.target, d.user_ids])).toEqual([
      ['selected', ['u1', 'u2']],
      ['single', ['u3']],
    ]);
  });

  it('--group and --member-session', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const group = await oa(['broadcast', '--group', GROUP, '--text', 'To the group'], { env });
    const session = await oa(['broadcast', '--member-session', SESSION, '--text', 'To the session'], { env });
    expect([group.code, session.code]).toEqual([0, 0]);
    expect(mock.deliveries).toMatchObject([
      { endpoint: 'broadcastToGroup', account_provider_group_id: GROUP },
      { endpoint: 'broadcastToMemberSession', member_group_broadcast_id: SESSION },
    ]);
  });

  it('items from a JSON file (an array, or { items }), placed before the item flags', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const audio = {
      type: 'audio',
      msg: 'https://cdn.example.com/a.mp3',
      audio_uuid: '7c9e6679-7425-40de-944b-e07fc1f90ae7',
      audio_size: 2540,
      audio_duration: 1,
    };
    const listFile = join(workDir, 'items.json');
    const objectFile = join(workDir, 'items-object.json');
    await writeFile(listFile, JSON.stringify([{ type: 'message', msg: 'From the file' }, audio]));
    await writeFile(
      objectFile,
      JSON.stringify({ items: [{ type: 'image', msg: 'https://cdn.example.com/c.png' }] }),
    );
    const fromList = await oa(['broadcast', '--target', 'all', '--items-file', listFile, '--text', 'After'], {
      env,
    });
    const fromObject = await oa(['broadcast', '--target', 'all', '--items-file', objectFile], { env });
    expect([fromList.code, fromObject.code]).toEqual([0, 0]);
    expect(mock.deliveries.map((d) => d.items.map((item) => item.type))).toEqual([
      ['message', 'audio', 'message'],
      ['image'],
    ]);
  });

  it('--items-file - reads the items from standard input', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const input = JSON.stringify([{ type: 'message', msg: 'From stdin' }]);
    const piped = await oa(['broadcast', '--target', 'all', '--items-file', '-', '--text', 'After'], {
      env,
      input,
    });
    const broken = await oa(['broadcast', '--target', 'all', '--items-file', '-'], { env, input: '[{' });
    expect(piped.code).toBe(0);
    expect(mock.deliveries.map((d) => d.items.map((item) => item.msg))).toEqual([['From stdin', 'After']]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toBe('oa: cannot read the items file standard input (not valid JSON)\n');
  });

  it('--item adds any item as JSON', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const item =
      '{"type":"oa_image_link","msg":"https://cdn.example.com/a.png","link":"https://x.example.com"}';
    const { code } = await oa(['broadcast', '--target', 'all', '--item', item], { env });
    expect(code).toBe(0);
    expect(mock.deliveries[0]?.items[0]).toMatchObject({ type: 'oa_image_link' });
  });

  it('usage errors exit 2 and send nothing', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    await writeFile(join(workDir, 'not-json.json'), '[{');
    const runs = await Promise.all([
      oa(['broadcast', '--text', 'No audience'], { env }),
      oa(['broadcast', '--target', 'all'], { env }),
      oa(['broadcast', '--target', 'everyone', '--text', 'x'], { env }),
      oa(['broadcast', '--target', 'all', '--group', GROUP, '--text', 'x'], { env }),
      oa(['broadcast', '--target', 'all', '--link', 'https://x.example.com'], { env }),
      oa(['broadcast', '--target', 'all', '--item', '[1]'], { env }),
      oa(['broadcast', '--target', 'all', '--items-file', join(workDir, 'not-json.json')], { env }),
      oa(['broadcast', '--target', 'all', '--items-file', join(workDir, 'missing.json')], { env }),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2, 2, 2, 2, 2]);
    const errors = runs.map((run) => run.stderr.split('\n')[0]);
    expect(errors).toEqual([
      'oa: give --target, --group or --member-session',
      'oa: give at least one item (see --help)',
      "oa: option '--target <target>' argument 'everyone' is invalid. Allowed choices are all, selected, single.",
      "oa: option '--target <target>' cannot be used with option '--group <account_provider_group_id>'",
      "oa: option '--link <url>' argument 'https://x.example.com' is invalid. It must come right after a --image.",
      "oa: option '--item <json>' argument '[1]' is invalid. It is not a JSON object.",
      `oa: cannot read the items file ${join(workDir, 'not-json.json')} (not valid JSON)`,
      `oa: cannot read the items file ${join(workDir, 'missing.json')} (ENOENT)`,
    ]);
    expect(mock.requests).toEqual([]);
  });

  it('items the SDK refuses: exit 2, every problem named, nothing sent; --json puts the error on stderr', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const sixTexts = ['1', '2', '3', '4', '5', '6'].flatMap((n) => ['--text', n]);
    const human = await oa(['broadcast', '--target', 'all', ...sixTexts], { env });
    expect(human.code).toBe(2);
    expect(human.stderr).toBe(
      'oa: the items (--text, --image, --video, --flex, --item, --items-file): must hold 1 to 5 message items: send the rest in another broadcast (nothing was sent)\n',
    );
    const json = await oa(['broadcast', '--target', 'all', '--user', 'u1', '--text', 'x', '--json'], { env });
    expect(json.code).toBe(2);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toEqual({
      error: {
        name: 'UsageError',
        message: '--target all goes to every user: drop --user, or use --target selected',
      },
    });
    expect(mock.requests).toEqual([]);
  });

  it('--video FILE --probe-user: uploads, waits for the transcode through the probe, then broadcasts, all shown', async ({
    expect,
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const args = ['broadcast', '--target', 'selected', '--user', 'u1', '--user', 'u2'];
    const run = oa([...args, '--text', 'New clip', '--video', clip, '--probe-user', 'probe-user'], {
      env,
    });
    await endTranscodesOnceWaitedFor(expect, mock);
    const { code, stdout, stderr } = await run;
    expect(code).toBe(0);
    const ticket_id = mock.uploads[0]?.result.ticket_id;
    expect(stdout).toMatch(/^broadcast [\w-]+: 2 items \(message, video\)\n/);
    expect(stderr).toMatch(
      new RegExp(
        '^upload sample\\.mp4 0% 0 B/2\\.1 KB\nupload sample\\.mp4 100% 2\\.1 KB/2\\.1 KB\n' +
          `uploaded sample\\.mp4: ticket_id ${ticket_id}\n` +
          'transcode converting; try 2 in \\d+\\.\\d s\n(transcode converting; try \\d in \\d+\\.\\d s\n)*' +
          `video ${ticket_id} delivered to the probe user probe-user: it is ready\n` +
          'transcode ready after \\d+\\.\\d s\n$',
      ),
    );
    expect(mock.deliveries.map((d) => [d.endpoint, d.user_ids, d.failure])).toEqual([
      ['sendVideo', ['probe-user'], undefined],
      ['broadcast', ['u1', 'u2'], undefined],
    ]);
    expect(mock.deliveries[1]?.items).toEqual([
      { type: 'message', msg: 'New clip' },
      { type: 'video', msg: ticket_id },
    ]);
  });

  it('--video TICKET of an earlier upload waits the same way, for a group too', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_BRIEFLY);
    const uploaded = await oa(['upload', 'video', clip, '--json'], { env });
    const { ticket_id } = JSON.parse(uploaded.stdout);
    const { code } = await oa(
      ['broadcast', '--group', GROUP, '--video', ticket_id, '--probe-user', 'probe-user', '--json'],
      { env },
    );
    expect(code).toBe(0);
    expect(mock.deliveries.map((d) => [d.endpoint, d.failure])).toEqual([
      ['sendVideo', undefined],
      ['broadcastToGroup', undefined],
    ]);
  });

  it('a video without --probe-user: exit 2 before anything is uploaded or sent; --no-wait broadcasts, and the job fails', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const items = join(workDir, 'video-items.json');
    await writeFile(items, JSON.stringify([{ type: 'video', msg: TICKET }]));
    const runs = await Promise.all([
      oa(['broadcast', '--target', 'all', '--video', clip], { env }),
      oa(['broadcast', '--target', 'all', '--items-file', items], { env }),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2]);
    for (const run of runs) {
      expect(run.stderr).toMatch(/^oa: a video item needs --probe-user USER_ID: .* Or --no-wait/);
    }
    expect(mock.requests).toEqual([]);

    const noWait = await oa(['broadcast', '--target', 'all', '--video', clip, '--no-wait'], { env });
    expect(noWait.code).toBe(0);
    expect(mock.deliveries).toMatchObject([{ endpoint: 'broadcast', failure: 'Video is in convert status' }]);
  });

  it('--wait-timeout: a transcode longer than the wait fails with exit 1, nothing broadcast, the ticket_id shown', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const args = [
      'broadcast',
      '--target',
      'all',
      '--video',
      clip,
      '--probe-user',
      'p',
      '--wait-timeout',
      '300',
    ];
    const { code, stderr } = await oa(args, { env });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^oa: OATranscodeTimeoutError: /m);
    expect(stderr).toContain(`    ticket_id: ${mock.uploads[0]?.result.ticket_id}\n`);
    expect(mock.deliveries).toEqual([]);
    expect(mock.requests.some((r) => r.path.includes('/message/'))).toBe(false);
  });
});
