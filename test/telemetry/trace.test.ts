// One message end to end across three processes sharing a real redis-server: a webhook delivery
// (receiver), its inbox job, the handler that adds a reply to the outbox (handler) and the reply's
// send with a 429 retry (sender) are one trace, read back from the spans each process wrote.
// With OA_TRACE_PICTURE=docs/trace.svg, the trace is also drawn there (the picture of docs/observability.md).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer, sendInboundMessage } from '../../src/testing/index.js';
import { traceSvg } from '../helpers/trace-svg.js';
import { kill, type Running, startScript } from '../queue/processes.js';
import { REDIS_SERVER, type RedisServer, startRedis } from '../redis/redis-server.js';
import { readSpans, type SpanLine } from './span-file.js';

const SCRIPT = fileURLToPath(new URL('./trace-process.ts', import.meta.url));
const SEND = '/webhook/broadcast-message';

/** Polls `check` every 50 ms until it returns something, for at most `ms`. */
async function until<T>(check: () => T | undefined, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!REDIS_SERVER)('one trace from webhook to reply, across three processes', () => {
  let redis: RedisServer;
  let fake: MockServer;
  let dir: string;
  const running: Running[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    fake = await createMockServer();
    dir = mkdtempSync(join(tmpdir(), 'oa-trace-'));
  });
  afterAll(async () => {
    for (const child of running) {
      child.child.stdin.end();
      await kill(child);
    }
    await fake?.close();
    await redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('webhook -> inbox -> handler -> outbox -> send (with a retry) share one trace id', async () => {
    const file = (role: string) => join(dir, `${role}.jsonl`);
    const start = async (role: string) => {
      const child = await startScript(SCRIPT, [
        role,
        redis.url,
        file(role),
        fake.url,
        fake.apiKey,
        fake.apiSecret,
      ]);
      running.push(child);
      return child;
    };
    const receiver = await start('receiver');
    await start('handler');
    await start('sender');
    const url = /url (\S+)/.exec(receiver.output)?.[1] ?? '';
    fake.injectFault({ kind: 'rate-limit', retryAfterSeconds: 1 }, { path: SEND });

    const delivery = await sendInboundMessage(url, 'Where is my parcel?', { from: 'user_42' });
    expect(delivery.status).toBe(200);
    await until(() => (fake.deliveries.length > 0 ? true : undefined), 20_000, 'the reply to be delivered');
    const spans = await until(
      () => {
        const all = ['receiver', 'handler', 'sender'].flatMap((role) => readSpans(file(role)));
        return all.some((s) => s.name === 'process trace-out') ? all : undefined;
      },
      10_000,
      "the sender's job span",
    );

    const one = (name: string, role: string): SpanLine => {
      const found = spans.filter((s) => s.name === name && s.process === role);
      expect(found, `${name} in ${role}`).toHaveLength(1);
      return found[0] as SpanLine;
    };
    const webhook = one('oa webhook', 'receiver');
    const inboxJob = one('process trace-in', 'handler');
    const outboxJob = one('process trace-out', 'sender');
    const send = one('oa sendText', 'sender');
    expect(new Set([webhook, inboxJob, outboxJob, send].map((s) => s.traceId)).size).toBe(1);
    // Each continues the one before it: a parent, not a link.
    expect(inboxJob.parentSpanId).toBe(webhook.spanId);
    expect(outboxJob.parentSpanId).not.toBeUndefined();
    expect(spans.find((s) => s.spanId === outboxJob.parentSpanId)?.process).toBe('handler');
    expect(send.parentSpanId).toBe(outboxJob.spanId);
    expect(webhook.attributes).toMatchObject({
      'oa.webhook.event': 'message',
      'oa.duplicate': false,
      'http.response.status_code': 200,
    });
    expect(webhook.attributes['oa.msg_key']).toEqual(expect.any(String));
    expect(outboxJob.attributes['oa.job.state']).toBe('delivered');
    expect(send.attributes['oa.attempts']).toBe(2);
    expect(send.events.map((e) => e.name)).toContain('oa.retry');
    // No message text anywhere.
    const text = JSON.stringify(spans);
    expect(text).not.toContain('Where is my parcel');
    expect(text).not.toContain('Thanks, we got it');
    expect(text).not.toContain(fake.apiSecret);

    const picture = process.env.OA_TRACE_PICTURE;
    if (picture) {
      const trace = spans.filter((s) => s.traceId === webhook.traceId);
      writeFileSync(
        resolve(picture),
        traceSvg(trace, 'One inbound message and its reply: webhook -> inbox -> handler -> outbox -> send'),
      );
    }
  });
});
