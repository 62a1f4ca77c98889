// Two webhook receiver processes behind one "load balancer", deduplicating through a real Redis: every
// message goes to both, some twice, failures are redelivered as the OA would; onEvent succeeds once
// per message across both, and a message whose first onEvent failed is processed on redelivery. A
// receiver killed while its onEvent runs stops extending its claim: the other one takes the message over.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { dedupeKeyOf } from '../../src/webhook/dedupe.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { collectOutput } from '../helpers/run-script.js';
import { textEvent } from '../webhook/support.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

const SCRIPT = fileURLToPath(new URL('./webhook-receiver.ts', import.meta.url));
const MESSAGES = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Receiver {
  child: ChildProcessWithoutNullStreams;
  url: string;
  output: () => string;
}

async function startReceiver(redisUrl: string, ...args: string[]): Promise<Receiver> {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, redisUrl, ...args], { stdio: 'pipe' });
  const output = collectOutput(child);
  const deadline = performance.now() + 15_000;
  for (;;) {
    const url = /listening (\S+)\n/.exec(output())?.[1];
    if (url) return { child, url, output };
    if (child.exitCode !== null || performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the receiver did not start:\n${output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Posts like the OA service: a 5xx (or a dropped connection) is delivered again, up to 20 times. */
async function deliver(url: string, body: string): Promise<{ status: number; json: unknown; tries: number }> {
  for (let tries = 1; ; tries++) {
    const response = await fetch(url, { method: 'POST', body }).catch(() => undefined);
    if (response && response.status < 500)
      return { status: response.status, json: await response.json(), tries };
    await response?.body?.cancel();
    if (tries === 20) throw new Error(`still ${response?.status ?? 'no answer'} after ${tries} deliveries`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Runs `task` for 0..count-1, `limit` at a time. */
async function pool(count: number, limit: number, task: (index: number) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

function exited(child: ChildProcessWithoutNullStreams, ms: number): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

describe.skipIf(!REDIS_SERVER)('webhook receivers in two processes share dedupe through Redis', () => {
  const shared = useRedisServer();
  let receivers: Receiver[] = [];

  afterEach(() => {
    for (const { child } of receivers) if (child.exitCode === null) child.kill('SIGKILL');
    receivers = [];
  });

  it('200 messages to both, duplicates and redeliveries mixed in: one successful onEvent each', async () => {
    receivers = await Promise.all([startReceiver(shared.server.url), startReceiver(shared.server.url)]);
    const [a, b] = receivers as [Receiver, Receiver];
    const isFlaky = (seq: number) => seq % 10 === 3;
    const answers: { status: number; json: unknown; tries: number }[] = [];

    await pool(MESSAGES, 12, async (index) => {
      const seq = index + 1;
      const body = JSON.stringify(textEvent(isFlaky(seq) ? 'flaky' : `message ${seq}`, seq));
      const deliveries = [deliver(a.url, body), deliver(b.url, body)];
      // Some messages reach one instance twice at once as well.
      if (seq % 7 === 0) deliveries.push(deliver(a.url, body));
      answers.push(...(await Promise.all(deliveries)));
    });

    for (const receiver of receivers) receiver.child.stdin.end();
    const codes = await Promise.all(receivers.map(({ child }) => exited(child, 10_000)));
    expect(codes, `${a.output()}\n${b.output()}`).toEqual([0, 0]);

    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const lines = `${a.output()}${b.output()}`.split('\n');
    const count = (kind: string) => {
      const seen = new Map<number, number>();
      for (const line of lines) {
        const [word, seq] = line.split(' ');
        if (word === kind) seen.set(Number(seq), (seen.get(Number(seq)) ?? 0) + 1);
      }
      return seen;
    };
    const processed = count('processed');
    expect(processed.size).toBe(MESSAGES);
    expect([...processed.values()].every((times) => times === 1)).toBe(true);
    // Each flaky message failed once, somewhere, and was processed on a redelivery.
    const failed = count('failed');
    expect([...failed.keys()].sort((x, y) => x - y)).toEqual(
      Array.from({ length: MESSAGES }, (_, i) => i + 1).filter(isFlaky),
    );
    expect([...failed.values()].every((times) => times === 1)).toBe(true);
    expect(answers.some((answer) => answer.tries > 1)).toBe(true);
    // Every delivery but the one that processed a message was recognised as a duplicate.
    const duplicates = answers.filter((answer) => (answer.json as { duplicate?: boolean }).duplicate);
    expect(duplicates).toHaveLength(answers.length - MESSAGES);
    // Done keys stay in Redis for the dedupe ttl, under the store's prefix.
    expect(await shared.redis.keys('test:dedupe:*')).toHaveLength(MESSAGES);
  }, 90_000);

  it('a receiver killed during a slow onEvent: its claim stops being extended and the other takes over', async () => {
    receivers = await Promise.all([
      startReceiver(shared.server.url, '300'),
      startReceiver(shared.server.url, '300'),
    ]);
    const [a, b] = receivers as [Receiver, Receiver];
    const body = JSON.stringify(textEvent('hang', 5));
    const key = `test:dedupe:${dedupeKeyOf(parseWebhookEvent(body))}`;
    // Never answered: the process dies first.
    const lost = fetch(a.url, { method: 'POST', body }).catch(() => 'connection lost');
    const deadline = performance.now() + 10_000;
    while (!a.output().includes('started 5') && performance.now() < deadline) await sleep(10);
    expect(a.output()).toContain('started 5');
    // Alive past three times claimTtlMs: it still holds the message.
    await sleep(900);
    expect(await shared.redis.get(key)).toMatch(/^claim:/);

    a.child.kill('SIGKILL');
    expect(await exited(a.child, 5_000)).toBeNull();
    expect(await settleWithin(lost, 5_000, 'the killed delivery')).toMatchObject({
      value: 'connection lost',
    });
    const answer = await settleWithin(deliver(b.url, body), 10_000, 'the redelivery');
    expect(answer).toMatchObject({ ok: true, value: { status: 200, json: { ok: true } } });
    expect(b.output()).toContain('processed 5');
    expect(await shared.redis.get(key)).toBe('done');
  }, 30_000);
});
