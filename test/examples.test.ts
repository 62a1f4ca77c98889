import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendInboundMessage } from '../src/testing/index.js';
import { collectOutput } from './helpers/run-script.js';
import { REDIS_SERVER, startRedisServer } from './redis/redis-server.js';

/**
 * Every example, and the demo, as a user runs them: a child process with tsx from the repository root
 * (whose tsconfig maps 'oa-messaging' to src/), with none of the machine's OA_* variables, so against
 * the fake OA server.
 * The examples run one at a time, the demo alongside them: few processes at once, so the timing tests
 * of other files keep their CPU.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
/** The settings the examples read (OA_*, PORT, REDIS_URL, WEBHOOK_PATH) come from the test alone. */
const EXAMPLE_SETTINGS = /^(OA_|PORT$|REDIS_URL$|WEBHOOK_PATH$)/;
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !EXAMPLE_SETTINGS.test(name)));

interface Run {
  child: ChildProcess;
  /** stdout and stderr together, as they came. */
  output: () => string;
  exit: Promise<number | null>;
}

function start(script: string, args: string[] = [], extraEnv: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${script}.ts`, ...args], {
    cwd: root,
    env: { ...env, ...extraEnv },
    stdio: 'pipe',
  });
  const output = collectOutput(child);
  // An example must end by itself: a handle left open would keep it alive until this kill.
  const killer = setTimeout(() => child.kill(), 55_000);
  const exit = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(killer);
      resolve(code);
    }),
  );
  return { child, output, exit };
}

async function run(
  script: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  const started = start(script, [], extraEnv);
  const code = await started.exit;
  return { code, output: started.output() };
}

/** No key secret, no token: the fake's secret and anything shaped like a JWT. */
function expectNoSecrets(output: string): void {
  expect(output).not.toContain('test-api-secret');
  expect(output).not.toMatch(/eyJ[\w-]{8,}\.[\w-]{8,}/);
}

describe('examples (each as a child process, against the fake)', () => {
  let demo: Run;
  beforeAll(() => {
    demo = start('demo');
  });
  afterAll(() => {
    demo.child.kill(); // no-op once it has ended
  });

  it('quickstart: a token obtained, a text sent', async () => {
    const { code, output } = await run('quickstart');
    expect(output).toContain('using the fake OA server at http://127.0.0.1:');
    expect(output).toContain('token: obtained by login (reason: no_token)');
    expect(output).toContain('sendText to user-1: success');
    expect(output).toContain('The fake received 2 messages and 1 login');
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);

  it('broadcast: every item type to every target, no failed job', async () => {
    const { code, output } = await run('broadcast');
    for (const line of [
      /^all +record \w{8} {2}\[message, oa_image_link\]/m,
      /^selected \(2\) +record \w{8} {2}\[image, flex\]/m,
      /^single +record \w{8} {2}\[message, video, audio\]/m,
      /^group +record \w{8} {2}\[message, flex\]/m,
      /^member session +record \w{8} {2}\[oa_image_link, audio\]/m,
    ]) {
      expect(output).toMatch(line);
    }
    expect(output).toContain('a broadcast job is still running; trying again in');
    expect(output).toMatch(/^video ready: delivered to the probe user user-1 after \d+\.\d s$/m);
    expect(output).toContain('The fake ran 5 broadcast jobs, 0 failed.');
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);

  it('media: uploads with progress, the transcode wait, the one-call helpers', async () => {
    const { code, output } = await run('media');
    // Not a terminal: progress on one plain line.
    expect(output).toMatch(/^ {2}audio tone\.wav: 0%( \d+%)+ 100%$/m);
    expect(output).toMatch(/^ {2}image sample\.png: 0% 100%$/m);
    expect(output).toContain('sendVideo: the video is still converting; try 2 in');
    expect(output).toMatch(/^ {2}sendVideo: success after \d+\.\d s$/m);
    for (const helper of ['sendImageFile', 'sendAudioFile']) expect(output).toContain(`${helper}: success`);
    expect(output).toMatch(/^ {2}sendVideoFile: success after \d+\.\d s$/m);
    expect(output).toContain('The fake stored 6 files and delivered 6 messages');
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);

  it('webhook-receiver: text, image, video and voice received and answered, a redelivery skipped', async () => {
    const { code, output } = await run('webhook-receiver');
    expect(output).toContain('text:  Hello! Is the blue jacket still in stock?');
    expect(output).toContain('media: image, 1.8 MB at https://');
    expect(output).toContain('media: video, 1.1 MB at https://');
    expect(output).toContain('media: audio, 60.9 KB at https://');
    expect(output).not.toContain('sign='); // signed media URLs are not printed
    expect(output).toContain('Posted 4 messages and 1 redelivery, all answered 200; onEvent ran 4 times.');
    expect(output).toContain('The fake OA server received 4 replies.');
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);

  it('webhook-receiver --listen --reply: serves until SIGINT, then exits 0', async () => {
    const receiver = start('webhook-receiver', ['--listen', '--reply'], { PORT: '0' });
    try {
      await expect.poll(receiver.output, { timeout: 30_000, interval: 100 }).toContain('Waiting for events');
      const url = /Receiving OA webhook events at (\S+)/.exec(receiver.output())?.[1];
      expect(url).toBeDefined();
      const delivery = await sendInboundMessage(url ?? '', 'Are you open on Sunday?', { from: 'user_7' });
      expect(delivery.status).toBe(200);
      // The child's stdout may come in after the HTTP answer.
      await expect
        .poll(receiver.output, { timeout: 10_000, interval: 50 })
        .toContain('reply: sent to user_7');
    } finally {
      receiver.child.kill('SIGINT');
    }
    expect(await receiver.exit).toBe(0);
    expect(receiver.output()).toContain('text:  Are you open on Sunday?');
    expect(receiver.output()).toContain('Stopped.');
  }, 60_000);

  it.skipIf(!REDIS_SERVER)(
    'campaign: queued in Redis, progress, every message delivered once',
    async () => {
      const redis = await startRedisServer();
      try {
        const { code, output } = await run('campaign', { REDIS_URL: redis.url });
        expect(output).toContain('Queued 120 messages (10 of them added twice: kept once)');
        expect(output).toMatch(/^ {2}\d+\.\d s: \d+\/120 done/m);
        expect(output).toContain(
          'Final counts: {"waiting":0,"delayed":0,"active":0,"delivered":120,"failed":0,"unknown":0}',
        );
        expect(output).toContain('The fake received 120 messages');
        expect(output).toContain('Delivered events heard: 120');
        expectNoSecrets(output);
        expect(code).toBe(0);
      } finally {
        await redis.stop();
      }
    },
    60_000,
  );

  it('accounts: each account answers through itself, a forged event refused, a campaign each', async () => {
    const { code, output } = await run('accounts');
    expect(output).toMatch(/^shop-a: webhook http:\/\/127\.0\.0\.1:\d+\/oa\/webhook\/shop-a\/[\w-]{6}…/m);
    expect(output).toContain(
      '   shop-a -> user-1: shop-a here: "where is my order?" is your message #2 to us.',
    );
    expect(output).toContain('   shop-b -> user-1: shop-b here: "hello" is your message #1 to us.');
    expect(output).toContain("an event for shop-b posted to shop-a's URL: 403 (refused)");
    expect(output).toContain("The fake's shop-a received 3 messages and 1 login");
    expect(output).toContain("The fake's shop-b received 2 messages and 1 login");
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);

  it('support-bot: a menu, an order kept in the session, a photo answered, through the fake', async () => {
    const { code, output } = await run('support-bot');
    expect(output).toContain(
      'user-1: order 1001\n   bot: Order 1001 is shipped on Monday; it arrives tomorrow.',
    );
    expect(output).toContain('user-1: status\n   bot: Order 1001 is shipped on Monday; it arrives tomorrow.');
    expect(output).toMatch(
      /user-1: \(a photo\)\n {3}bot: Sorry it arrived damaged.*\n {3}bot: \[sendImage\]/,
    );
    expect(output).toContain('user-1: what?\n   bot: Sorry, I didn\'t get "what?"');
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);

  it('demo: runs the five examples with a word on each and a summary', async () => {
    const code = await demo.exit;
    const output = demo.output();
    expect(output).toContain('[1/5] quickstart:');
    expect(output).toContain('[2/5] broadcast:');
    expect(output).toContain('[3/5] media:');
    expect(output).toContain('[4/5] webhook-receiver:');
    expect(output).toContain('[5/5] support-bot:');
    expect(output).toContain('Summary: 5 of 5 examples passed');
    expect(output).toMatch(/open its web inbox:\n {2}npx oa mock-server/);
    expect(output).not.toContain('FAILED');
    expectNoSecrets(output);
    expect(code).toBe(0);
  }, 60_000);
});
