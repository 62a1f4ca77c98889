import { spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { sendInboundMessage } from '../../src/testing/index.js';
import { createWebhookHandler, getMessageText, type WebhookEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { asMessage } from '../webhook/support.js';
import { oa, oaBin, type Started, startOa, waitFor } from './run-oa.js';

/** Long-running commands: started, driven, then stopped with a signal. */
let running: Started | undefined;
afterEach(() => {
  running?.child.kill('SIGKILL'); // a no-op once it has ended
  running = undefined;
});

describe('oa mock-server', () => {
  it('prints its URL and the test credentials, serves oa, stops on SIGINT with exit 0', async () => {
    running = startOa(['mock-server', '--port', '0', '--transcode-ms', '100']);
    await waitFor(expect, running.stdout, /OA_API_SECRET=.*\n/);
    const url = /^Fake OA API listening at (http:\/\/127\.0\.0\.1:\d+)$/m.exec(running.stdout())?.[1];
    expect(running.stdout()).toBe(
      `Fake OA API listening at ${url}\nOA_BASE_URL=${url}\nOA_API_KEY=test-api-key\nOA_API_SECRET=test-api-secret\n`,
    );
    const env = { OA_BASE_URL: url ?? '', OA_API_KEY: 'test-api-key', OA_API_SECRET: 'test-api-secret' };
    const sent = await oa(['send', 'text', '-u', 'user-1', '-m', 'Hello'], { env });
    expect(sent.code).toBe(0);
    running.child.kill('SIGINT');
    expect(await running.exit).toBe(0);
    expect(running.stderr()).toContain('Stopped. The fake received 2 requests.');
  });

  it('serves the web inbox at its URL; --webhook is where the replies typed in it go', async () => {
    const events: WebhookEvent[] = [];
    const receiver = await listen(createWebhookHandler({ onEvent: (event) => void events.push(event) }));
    try {
      running = startOa(['mock-server', '--webhook', `${receiver.url}/hook`]);
      await waitFor(expect, running.stderr, /Press Ctrl\+C/);
      const url = /^Fake OA API listening at (\S+)$/m.exec(running.stdout())?.[1] ?? '';
      expect(running.stderr()).toContain(`Web inbox: open ${url}/ in a browser.`);
      const page = await request(`${url}/`);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(await page.body.text()).toContain('<title>OA inbox');
      const reply = await request(`${url}/_inbox/reply`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: 'user_3', text: 'Hello from the page' }),
      });
      expect(await reply.body.json()).toMatchObject({ status: 200, webhookUrl: `${receiver.url}/hook` });
      expect(events.map((event) => [asMessage(event).data.From_Account, getMessageText(event)])).toEqual([
        ['user_3', 'Hello from the page'],
      ]);
      running.child.kill('SIGINT');
      expect(await running.exit).toBe(0);
    } finally {
      await receiver.close();
    }
  });

  it('--webhook must be an http(s) URL', async () => {
    running = startOa(['mock-server', '--webhook', 'ftp://example.com/hook']);
    expect(await running.exit).toBe(2);
    expect(running.stderr()).toMatch(/--webhook.*Not an http\(s\) URL/);
  });

  it('--json: one JSON line with the URL and credentials; SIGTERM stops it', async () => {
    running = startOa(['mock-server', '--json']);
    await waitFor(expect, running.stdout, /\n/);
    expect(JSON.parse(running.stdout())).toEqual({
      members: expect.any(Object),
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      apiKey: 'test-api-key',
      apiSecret: 'test-api-secret',
    });
    running.child.kill('SIGTERM');
    expect(await running.exit).toBe(0);
  });
});

describe('oa webhook listen', () => {
  const listening = /Listening for OA webhook events at (http:\/\/\S+)/;

  it('prints each inbound event readably, answers other paths 404, stops on SIGINT with exit 0', async () => {
    running = startOa(['webhook', 'listen', '--port', '0', '--path', '/oa/hook']);
    await waitFor(expect, running.stderr, listening);
    const url = listening.exec(running.stderr())?.[1] ?? '';
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/oa\/hook$/);

    const text = await sendInboundMessage(url, 'Is the blue jacket in stock?', { from: 'user_7' });
    const image = await sendInboundMessage(url, {
      type: 'image',
      width: 2448,
      height: 3264,
      size: 1_853_095,
    });
    const elsewhere = await sendInboundMessage(url.replace('/oa/hook', '/other'), 'lost');
    expect([text.status, image.status, elsewhere.status]).toEqual([200, 200, 404]);
    await waitFor(expect, running.stdout, /media: /);
    running.child.kill('SIGINT');
    expect(await running.exit).toBe(0);
    expect(running.stdout()).toMatch(
      /^message from user_7 to oa_account at \S+\n {2}text: {2}Is the blue jacket in stock\?\nmessage from user_1 to oa_account at \S+\n {2}media: image 2448x3264 jpg, 1\.8 MB at https:\/\/im-media\.example\.com\/… \(signed\)\n$/,
    );
    // The signed part of a media URL stays out of the terminal.
    expect(running.stdout()).not.toContain('sign=');
    expect(running.stderr()).toMatch(/Stopped\.\n$/);
  });

  it('--json: one JSON line per event, as received; SIGTERM stops it', async () => {
    running = startOa(['webhook', 'listen', '--port', '0', '--json']);
    await waitFor(expect, running.stderr, listening);
    const url = listening.exec(running.stderr())?.[1] ?? '';
    const first = await sendInboundMessage(url, 'One', { from: 'user_1' });
    const second = await sendInboundMessage(url, { type: 'sound', seconds: 4 }, { from: 'user_2' });
    expect([first.status, second.status]).toEqual([200, 200]);
    await waitFor(expect, running.stdout, /\n.*\n/);
    running.child.kill('SIGTERM');
    expect(await running.exit).toBe(0);
    const lines = running.stdout().trimEnd().split('\n');
    expect(lines.map((line) => JSON.parse(line))).toEqual([first.event, second.event]);
  });
});

/** The environment without what npm sets, so that only the test's own `npm_command` counts. */
const npmless = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));

describe('started through npm (npx oa mock-server &, then kill $!)', () => {
  it('stops when the shell npm started it under is killed, freeing its port', async () => {
    // npm runs the command under `sh -c`; `; true` keeps this shell from handing its PID to oa.
    const shell = spawn('sh', ['-c', `"${oaBin}" mock-server --port 0; true`], {
      env: {
        ...npmless,
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        npm_command: 'exec',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      shell.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      await waitFor(expect, () => stdout, /OA_API_SECRET=/);
      const url = /^Fake OA API listening at (\S+)$/m.exec(stdout)?.[1] ?? '';
      expect((await request(`${url}/`)).statusCode).toBe(200);
      shell.kill('SIGTERM');
      // The server goes away by itself: its port refuses connections.
      await expect
        .poll(
          () =>
            request(`${url}/`).then(
              () => 'serving',
              () => 'stopped',
            ),
          { timeout: 10_000, interval: 100 },
        )
        .toBe('stopped');
    } finally {
      shell.kill('SIGKILL');
    }
  });
});
