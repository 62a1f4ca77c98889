import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { json, startRawServer } from '../helpers/raw-server.js';
import { makeJwt } from '../helpers/tokens.js';
import { endTranscodesOnceWaitedFor } from '../helpers/transcode.js';
import { fakeServer, oa } from './run-oa.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/media/${name}`, import.meta.url));

/** Videos that convert for a minute: still converting whenever a test looks, or until it ends them. */
const CONVERTS_LONG = { transcodeMs: 60_000 };

describe.concurrent('oa token', () => {
  it('prints the access token alone on stdout', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const { code, stdout, stderr } = await oa(['token'], { env });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
    expect(stderr).toBe('');
  });

  it('--json: the token, its type and lifetime; never the refresh token', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const { code, stdout } = await oa(['token', '--json'], { env });
    expect(code).toBe(0);
    const printed = JSON.parse(stdout);
    expect(Object.keys(printed).sort()).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(printed).toMatchObject({ token_type: 'Bearer', expires_in: '1h' });
  });

  it('an answer with no token_type, expires_in null and no refresh token: printed filled in', async ({
    onTestFinished,
  }) => {
    const iat = Math.floor(Date.now() / 1000);
    const access_token = makeJwt({ sub: 'provider-1', iat, exp: iat + 1800 });
    const server = await startRawServer((_req, res) =>
      json(res, 201, { data: { access_token, expires_in: null } }),
    );
    onTestFinished(() => server.close());
    const env = { OA_BASE_URL: server.url, OA_API_KEY: 'key-123456', OA_API_SECRET: 'secret-abcdef' };
    const plain = await oa(['token'], { env });
    expect([plain.code, plain.stdout, plain.stderr]).toEqual([0, `${access_token}\n`, '']);
    const { code, stdout } = await oa(['token', '--json'], { env });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ access_token, token_type: 'Bearer', expires_in: 1800 });
  });
});

describe.concurrent('oa send', () => {
  it('text, with the push text', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const { code, stdout } = await oa(['send', 'text', '--user', 'user-1', '-m', 'Hello', '--desc', 'Hi'], {
      env,
    });
    expect(code).toBe(0);
    expect(stdout).toBe('sent text to user-1: success\n');
    expect(mock.deliveries).toMatchObject([
      { endpoint: 'sendText', user_ids: ['user-1'], items: [{ type: 'message', msg: 'Hello', desc: 'Hi' }] },
    ]);
  });

  it('text --json: the answer as JSON', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const { code, stdout } = await oa(['send', 'text', '-u', 'user-1', '-m', 'Hello', '--json'], { env });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toBe('success');
  });

  it('greeting: names the greeting sent; --json gives the whole of it', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const human = await oa(['send', 'greeting', '-u', 'user-1'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('sent greeting "Welcome" to user-1\n');
    const json = await oa(['send', 'greeting', '-u', 'user-1', '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ title: 'Welcome', data: expect.any(Array) });
    expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendGreeting', 'sendGreeting']);
  });

  it('image by URL, with a link', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const args = ['send', 'image', '-u', 'user-1', '--url', 'https://cdn.example.com/a.png'];
    const { code } = await oa([...args, '--link', 'https://shop.example.com'], { env });
    expect(code).toBe(0);
    expect(mock.deliveries[0]?.items).toEqual([
      { type: 'oa_image_link', msg: 'https://cdn.example.com/a.png', link: 'https://shop.example.com' },
    ]);
  });

  it('image --file: uploads, then sends the stored URL; --json gives both answers', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const { code, stdout, stderr } = await oa(
      ['send', 'image', '-u', 'user-1', '--file', fixture('sample.png'), '--json'],
      { env },
    );
    expect(code).toBe(0);
    const printed = JSON.parse(stdout);
    expect(printed).toEqual({
      upload: { src_file: expect.any(String), url: expect.any(String) },
      result: 'success',
    });
    expect(mock.deliveries[0]?.items).toEqual([{ type: 'image', msg: printed.upload.url }]);
    expect(stderr).toMatch(/^upload sample\.png 100% 275 B\/275 B$/m);
  });

  it('audio --file, and audio from the values of an earlier upload', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const uploaded = await oa(['upload', 'audio', fixture('sample.mp3'), '--json'], { env });
    const audio = JSON.parse(uploaded.stdout);
    const fromValues = await oa(
      [
        'send',
        'audio',
        '-u',
        'user-1',
        ...['--url', audio.audio_url, '--uuid', audio.audio_uuid],
        ...['--size', String(audio.audio_size), '--duration', String(audio.audio_duration)],
      ],
      { env },
    );
    expect(fromValues.code).toBe(0);
    const fromFile = await oa(['send', 'audio', '-u', 'user-2', '--file', fixture('sample.mp3')], { env });
    expect(fromFile.code).toBe(0);
    expect(fromFile.stdout).toBe('sent audio to user-2: success\n');
    expect(mock.deliveries.map((d) => [d.endpoint, d.user_ids[0], d.items[0]?.type])).toEqual([
      ['sendAudio', 'user-1', 'audio'],
      ['sendAudio', 'user-2', 'audio'],
    ]);
  });

  it('video --file: uploads with progress, waits out the transcode with progress, sends', async ({
    expect,
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const run = oa(['send', 'video', '-u', 'user-1', '--file', fixture('sample.mp4')], { env });
    await endTranscodesOnceWaitedFor(expect, mock);
    const { code, stdout, stderr } = await run;
    expect(code).toBe(0);
    expect(stdout).toBe('sent video to user-1: success\n');
    // Not a terminal: plain lines, in order.
    expect(stderr).toMatch(
      /^upload sample\.mp4 0% 0 B\/2\.1 KB\nupload sample\.mp4 100% 2\.1 KB\/2\.1 KB\ntranscode converting; try 2 in \d+\.\d s\n(transcode converting; try \d in \d+\.\d s\n)*transcode ready after \d+\.\d s\n$/,
    );
    expect(mock.deliveries).toMatchObject([{ endpoint: 'sendVideo', items: [{ type: 'video' }] }]);
  });

  it('video --ticket --json, after the transcode', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const uploaded = await oa(['upload', 'video', fixture('sample.webm'), '--json'], { env });
    const { ticket_id } = JSON.parse(uploaded.stdout);
    mock.completeTranscodes(ticket_id);
    const { code, stdout, stderr } = await oa(
      ['send', 'video', '-u', 'user-1', '--ticket', ticket_id, '--json'],
      {
        env,
      },
    );
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toBe('success');
    expect(stderr).toBe(''); // no wait, nothing to show
  });

  it('video --no-wait on a ticket still converting: the API error, exit 1', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const uploaded = await oa(['upload', 'video', fixture('sample.mp4'), '--json'], { env });
    const { ticket_id } = JSON.parse(uploaded.stdout);
    const args = ['send', 'video', '-u', 'user-1', '--ticket', ticket_id, '--no-wait'];
    const { code, stderr } = await oa(args, { env });
    expect(code).toBe(1);
    expect(stderr).toContain('oa: OABadRequestError:');
    expect(stderr).toMatch(/^ {2}status: 400$/m);
    expect(stderr).toMatch(/^ {2}code: {3}BAD_REQUEST$/m);
    expect(mock.deliveries).toEqual([]);
  });

  it('video --wait-timeout: a transcode longer than the wait fails with exit 1', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const uploaded = await oa(['upload', 'video', fixture('sample.mp4'), '--json'], { env });
    const { ticket_id } = JSON.parse(uploaded.stdout);
    const args = ['send', 'video', '-u', 'user-1', '--ticket', ticket_id, '--wait-timeout', '300'];
    const { code, stderr } = await oa(args, { env });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^oa: OATranscodeTimeoutError: /m);
    expect(mock.deliveries).toEqual([]);
  });

  it('video --file failing after the upload: exit 1, with the ticket_id to send it again', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished, CONVERTS_LONG);
    const args = ['send', 'video', '-u', 'user-1', '--file', fixture('sample.mp4'), '--wait-timeout', '300'];
    const human = await oa(args, { env });
    const json = await oa([...args, '--json'], { env });
    expect([human.code, json.code]).toEqual([1, 1]);
    const [first, second] = mock.uploads.map((upload) => upload.result.ticket_id);
    expect(human.stderr).toMatch(/^oa: OATranscodeTimeoutError: /m);
    expect(human.stderr).toContain(
      `  The file was stored before the failure; to send it without uploading it again, use:\n    ticket_id: ${first}\n`,
    );
    // Progress lines come first on stderr; the error is its last line.
    expect(JSON.parse(json.stderr.trimEnd().split('\n').at(-1) ?? '')).toMatchObject({
      error: { name: 'OATranscodeTimeoutError', upload: { ticket_id: second } },
    });
    expect(json.stdout).toBe('');
    expect(mock.deliveries).toEqual([]);
  });

  it('a --file send with a wrong argument: exit 2 before the upload, nothing stored', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const image = ['send', 'image', '-u', 'user-1', '--file', fixture('sample.png'), '--link', 'not a url'];
    const video = ['send', 'video', '-u', ' ', '--file', fixture('sample.mp4')];
    const runs = await Promise.all([oa(image, { env }), oa(video, { env })]);
    expect(runs.map((run) => run.code)).toEqual([2, 2]);
    expect(runs[0]?.stderr).toBe(
      'oa: --link: must be an absolute URL starting with http:// or https:// (nothing was sent)\n',
    );
    expect(runs[1]?.stderr).toMatch(/^oa: --user: .* \(nothing was sent\)\n$/);
    expect(mock.requests).toEqual([]);
  });

  it('usage errors exit 2 and send nothing', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const runs = await Promise.all([
      oa(['send', 'image', '-u', 'user-1'], { env }),
      oa(['send', 'video', '-u', 'user-1', '--ticket', 't', '--file', 'clip.mp4'], { env }),
      oa(['send', 'audio', '-u', 'user-1', '--url', 'https://cdn.example.com/a.mp3'], { env }),
      oa(['send', 'text', '-m', 'no user'], { env }),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2]);
    expect(runs[0]?.stderr).toContain('oa: give --url or --file');
    expect(runs[1]?.stderr).toContain(
      "option '--ticket <ticket_id>' cannot be used with option '--file <path>'",
    );
    expect(runs[3]?.stderr).toContain("required option '-u, --user <user_id>' not specified");
    expect(mock.requests).toEqual([]);
  });
});
