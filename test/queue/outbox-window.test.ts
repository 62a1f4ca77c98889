// The outbox's "may have left" record spans only the time a request that can deliver is in flight: a
// worker killed while its client waits inside the call (a 429's Retry-After, a video still converting)
// or waits to retry after a refused connection, leaves a job that the next worker sends, once.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createOutbox, type Outbox, type OutboxJobStatus } from '../../src/queue/index.js';
import { jobIdOf } from '../../src/queue/methods.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { freePort } from '../helpers/ports.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import type { OutboxWorkerConfig } from './outbox-worker.js';
import { kill, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./outbox-worker.ts', import.meta.url));
const clip = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const FINAL = ['delivered', 'failed', 'unknown'];

describe.skipIf(!REDIS_SERVER)('outbox: the may-have-left window', () => {
  const shared = useRedisServer();
  const closing: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** A worker in a process of its own, which the test kills; a short lock, so that its jobs come back soon. */
  const startWorker = async (mock: MockServer, name: string, more: Partial<OutboxWorkerConfig> = {}) => {
    const config: OutboxWorkerConfig = {
      redisUrl: shared.server.url,
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      name,
      concurrency: 1,
      lockDurationMs: 1000,
      rateLimit: { general: { max: 100, windowMs: 1000 }, upload: { max: 10, windowMs: 1000 } },
      ...more,
    };
    const child = await startScript(SCRIPT, [JSON.stringify(config)]);
    closing.push(() => kill(child));
    return child;
  };

  /** The next worker, in this process: it picks up the dead worker's job once its lock expired. */
  const finishIn = async (mock: MockServer, outbox: Outbox, key: string) => {
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    closing.push(() => client.close());
    const worker = outbox.work({ client, lockDurationMs: 1000 });
    closing.push(() => worker.close());
    let status: OutboxJobStatus | undefined;
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(100)) {
      status = await outbox.get(key);
      if (status && FINAL.includes(status.state)) break;
    }
    return status;
  };

  const open = async (name: string, options: { transcodeMs?: number } = {}) => {
    const mock = await createMockServer(options);
    const outbox = createOutbox({ connection: { url: shared.server.url }, name });
    closing.push(
      () => mock.close(),
      () => outbox.close(),
    );
    return { mock, outbox };
  };

  it('a worker killed during a 429 Retry-After wait: the next worker sends it, delivered once', async () => {
    const { mock, outbox } = await open('window-429');
    mock.injectFault({ kind: 'rate-limit', retryAfterSeconds: 20 }, { path: '/webhook/broadcast-message' });
    await outbox.add('sendText', { user_id: 'u1', msg: 'hello' }, { key: 'k' });
    const child = await startWorker(mock, 'window-429', { printRetries: true });
    // The 429 answered and its record cleared (the client tells its retry after that): the worker's
    // client now waits 20 s inside the call.
    await expect.poll(() => child.output, { timeout: 10_000 }).toMatch(/(^|\n)retry rate_limited\n/);
    expect(mock.requests.filter((r) => r.status === 429)).toHaveLength(1);
    await kill(child);
    expect(mock.deliveries).toHaveLength(0);

    expect(await finishIn(mock, outbox, 'k')).toEqual({ state: 'delivered', result: 'success' });
    expect(mock.deliveries.map((d) => d.items)).toEqual([[{ type: 'message', msg: 'hello' }]]);
  });

  it('a worker killed while its sendVideo waits for a converting ticket: the next worker sends it once', async () => {
    const { mock, outbox } = await open('window-video', { transcodeMs: 60_000 });
    const uploader = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    closing.push(() => uploader.close());
    const { ticket_id } = await uploader.uploadVideo(clip);
    await outbox.add('sendVideo', { user_id: 'u1', ticket_id }, { key: 'video' });
    const child = await startWorker(mock, 'window-video', { printRetries: true });
    // The ticket is converting: the worker's sendVideo polls it, waiting about a second in between
    // (its record cleared before each wait).
    await expect.poll(() => child.output, { timeout: 10_000 }).toMatch(/(^|\n)retry video_converting\n/);
    await kill(child);
    mock.completeTranscodes(ticket_id);
    expect(mock.deliveries).toHaveLength(0);

    expect((await finishIn(mock, outbox, 'video'))?.state).toBe('delivered');
    expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendVideo']);
  });

  it('a worker killed in the backoff after a refused connection: its record is gone, the next worker sends it once', async () => {
    const { mock, outbox } = await open('window-refused');
    await outbox.add('sendText', { user_id: 'u1', msg: 'hello' }, { key: 'refused' });
    // Its logins reach the fake; every send meets a port nothing listens on.
    const refused = `http://127.0.0.1:${await freePort()}`;
    const child = await startWorker(mock, 'window-refused', { refuseSendsAt: refused, printRetries: true });
    // The first attempt was refused: the client now waits its backoff (0.25 to 0.5 s) inside the call.
    await expect.poll(() => child.output, { timeout: 10_000 }).toMatch(/(^|\n)retry not_sent\n/);
    await kill(child);
    // The record was cleared before that wait, and no attempt of the dead worker is in flight.
    const jobKey = `bull:window-refused:${jobIdOf('refused')}`;
    expect(await shared.redis.exists(jobKey)).toBe(1);
    expect(await shared.redis.hget(jobKey, 'oaSent')).toBeNull();
    expect(mock.deliveries).toHaveLength(0);

    expect(await finishIn(mock, outbox, 'refused')).toEqual({ state: 'delivered', result: 'success' });
    expect(mock.deliveries.map((d) => d.items)).toEqual([[{ type: 'message', msg: 'hello' }]]);
  });
});
