// `outbox.waitFor` is bounded by its signal, its timeoutMs and `outbox.close()` in every part, the reads
// of its keys included: against a real redis-server paused with `CLIENT PAUSE ... ALL` (it holds every
// command), and a child process that waits, closes the outbox and must then exit by itself.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { OAAbortError, OAConfigError, OAConnectionError, OATimeoutError } from '../../src/index.js';
import { createOutbox, type Outbox } from '../../src/queue/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

const CHILD = fileURLToPath(new URL('./outbox-wait-close.ts', import.meta.url));
const text = (key: string) => ({ method: 'sendText' as const, params: { user_id: 'u1', msg: key }, key });

/** How `promise` ended within `ms`: its value or error, or 'pending'. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | unknown> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms);
  });
  return Promise.race([promise.catch((error: unknown) => error), bound]).finally(() => clearTimeout(timer));
}

describe.skipIf(!REDIS_SERVER)('outbox.waitFor bounds', () => {
  const shared = useRedisServer();
  const closing: Outbox[] = [];
  afterEach(async () => {
    for (const outbox of closing.splice(0)) await outbox.close();
  });

  /** An outbox with two jobs no worker sends, its queue opened (so only the reads meet the pause). */
  const opened = async (name: string) => {
    const outbox = createOutbox({ connection: { url: shared.server.url }, name });
    closing.push(outbox);
    await outbox.addMany([text('k1'), text('k2')]);
    expect(await outbox.get('k1')).toEqual({ state: 'waiting' });
    return outbox;
  };
  const pauseRedis = (ms: number) => shared.redis.call('CLIENT', 'PAUSE', String(ms), 'ALL');

  it('a signal that fires while waitFor reads its keys ends it then, not after Redis answers', async () => {
    const outbox = await opened('wait-signal');
    await pauseRedis(1500);
    const controller = new AbortController();
    const started = performance.now();
    const waiting = outbox.waitFor(['k1', 'k2'], { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 200);
    const outcome = await within(waiting, 5000);
    expect(outcome).toBeInstanceOf(OAAbortError);
    expect((outcome as OAAbortError).cause).toEqual(new Error('stop'));
    // Redis was still paused: the read did not decide when it ended.
    expect(performance.now() - started).toBeLessThan(1200);

    // The same for 'all', whose first read is the list of open jobs.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await pauseRedis(1500);
    const again = new AbortController();
    const all = outbox.waitFor('all', { signal: again.signal });
    setTimeout(() => again.abort(), 200);
    expect(await within(all, 1200)).toBeInstanceOf(OAAbortError);
  });

  it('timeoutMs bounds the reads: 1,000 ms with Redis paused 3 s rejects after about 1 s', async () => {
    const outbox = await opened('wait-timeout');
    await pauseRedis(3000);
    const started = performance.now();
    const outcome = await within(outbox.waitFor(['k1', 'k2'], { timeoutMs: 1000 }), 5000);
    const tookMs = performance.now() - started;
    expect(outcome).toBeInstanceOf(OATimeoutError);
    expect((outcome as Error).message).toMatch(/1000 ms/);
    expect(tookMs).toBeGreaterThanOrEqual(950);
    expect(tookMs).toBeLessThan(2000);
  });

  it('close() rejects a pending waitFor (while it waits, and while it reads)', async () => {
    const outbox = await opened('wait-close');
    const waiting = within(outbox.waitFor(['k1']), 5000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const reading = within(outbox.waitFor(['k2']), 5000);
    const started = performance.now();
    await outbox.close();
    const [first, second] = await Promise.all([waiting, reading]);
    expect(performance.now() - started).toBeLessThan(3000);
    expect(first).toBeInstanceOf(OAConnectionError);
    expect((first as Error).message).toMatch(/closed/);
    expect(second).toBeInstanceOf(OAConnectionError);
    // A waitFor after close() is refused at once, as every call of a closed outbox.
    expect(await within(outbox.waitFor(['k1']), 1000)).toBeInstanceOf(OAConfigError);
  });

  it('a process that calls waitFor and then close() exits by itself', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, shared.server.url], { stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const code = await within(exited, 15_000);
    if (code === 'pending') child.kill('SIGKILL');
    expect(output).toContain('waitFor OAConnectionError');
    expect(code).toBe(0);
  });
});
