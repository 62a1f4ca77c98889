/**
 * The support-bot example answers a photo with an image of its own, uploaded once, never with the
 * user's signed, short-lived upload URL: the example runs as a user would run it (`--listen`, a child
 * process against the fake OA server), and two photos are posted to it.
 */
import { spawn } from 'node:child_process';
import { afterEach, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { collectOutput } from '../helpers/run-script.js';

let mock: MockServer | undefined;
let stop: (() => void) | undefined;
afterEach(async () => {
  stop?.();
  await mock?.close();
}, 60_000);

it('replies to each photo with the same uploaded image, uploaded once, not the user’s URL', async () => {
  mock = await createMockServer({ rateLimit: false });
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/support-bot.ts', '--listen'], {
    env: {
      ...process.env,
      OA_BASE_URL: mock.url,
      OA_API_KEY: mock.apiKey,
      OA_API_SECRET: mock.apiSecret,
      OA_USER_ID: 'user-1',
      PORT: '0', // the example prints the URL it listens at
    },
    stdio: 'pipe',
  });
  stop = () => child.kill('SIGKILL');
  const output = collectOutput(child);
  await expect.poll(output, { timeout: 40_000 }).toContain('Support bot listening');
  mock.webhookUrl = /set (http:\/\/\S+) as webhook_url/.exec(output())?.[1];

  const first = await mock.say('user-1', { type: 'image' }, { replies: 2, timeoutMs: 10_000 });
  const second = await mock.say('user-2', { type: 'image' }, { replies: 2, timeoutMs: 10_000 });
  const images = [...first, ...second].filter((reply) => reply.endpoint === 'sendImage');
  expect(images, output()).toHaveLength(2);
  const urls = images.map((reply) => String(reply.items[0]?.msg));
  // Not the user's upload (the fake's inbound media are on another, signed host) ...
  for (const url of urls) {
    expect(url.startsWith(mock.url), url).toBe(true);
    expect(url).not.toContain('sign=');
  }
  // ... and one upload for both replies.
  expect(urls[0]).toBe(urls[1]);
  expect(mock.requests.filter((request) => request.path.endsWith('/upload/image'))).toHaveLength(1);
}, 60_000);
