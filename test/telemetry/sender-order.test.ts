// The inbox's `order: 'sender'` keeps each event in its own delivery's trace: three quick messages of
// one user, the later two drained by the first one's turn, each handled (and replied to) inside the
// trace of the webhook delivery that brought it. A webhook handler storing into the inbox on loopback,
// a real redis-server, the fake server receiving the replies, spans read back from the SDK's exporter.
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { createInbox } from '../../src/queue/index.js';
import { sendInboundMessage } from '../../src/testing/index.js';
import { createWebhookHandler, isMessageEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { mockServerFixture } from '../testing/support.js';
import { useGlobalSpans } from './otel.js';

const fixture = mockServerFixture();
const exporter = useGlobalSpans();

/** Polls `check` every 50 ms until it holds, for at most `ms`. */
async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(!REDIS_SERVER)("traces with the inbox's order: 'sender'", () => {
  const shared = useRedisServer();

  it("each event drained by another's turn is handled in its own delivery's trace", async () => {
    const fake = await fixture.start();
    const client = fixture.connect(fake);
    const inbox = createInbox({
      connection: { url: shared.server.url },
      name: 'traced-order',
      order: 'sender',
    });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const server = await listen((req, res) => void handler(req, res));
    // The first event's handler waits until the other two are stored: its turn drains them.
    let release = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    const worker = inbox.work(async (event) => {
      if (!isMessageEvent(event)) return;
      if (!started) {
        started = true;
        await released;
      }
      await client.sendText({ user_id: String(event.data.From_Account), msg: 'Got it' });
    });
    try {
      const send = (text: string) =>
        sendInboundMessage(server.url, text, { from: 'user_42', timeoutMs: 5000 });
      expect((await send('one')).status).toBe(200);
      await until(() => started, 10_000, 'the first event to be handled');
      expect((await send('two')).status).toBe(200);
      expect((await send('three')).status).toBe(200);
      release();
      await until(() => fake.deliveries.length === 3, 15_000, 'three replies');
      const named = (name: string) => exporter.getFinishedSpans().filter((s) => s.name === name);
      await until(() => named('oa sendText').length === 3, 5_000, 'three reply spans');
      // Three turns (the later two found their events handled) and the two events drained by the first.
      await until(() => named('process traced-order').length === 5, 5_000, 'the inbox spans');

      const webhooks = named('oa webhook').sort(
        (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
      );
      expect(webhooks).toHaveLength(3);
      const traceOf = (span: ReadableSpan) => span.spanContext().traceId;
      expect(new Set(webhooks.map(traceOf)).size).toBe(3);
      const replies = named('oa sendText');
      const perDelivery = webhooks.map((w) => replies.filter((r) => traceOf(r) === traceOf(w)).length);
      expect(perDelivery).toEqual([1, 1, 1]);
      // Each reply is under a `process` span of the inbox, a child of its own delivery's webhook span.
      const all = exporter.getFinishedSpans();
      for (const webhook of webhooks) {
        const reply = replies.find((r) => traceOf(r) === traceOf(webhook)) as ReadableSpan;
        const parent = all.find((s) => s.spanContext().spanId === reply.parentSpanContext?.spanId);
        expect(parent?.name).toBe('process traced-order');
        expect(parent?.parentSpanContext?.spanId).toBe(webhook.spanContext().spanId);
      }
    } finally {
      release();
      await worker.close();
      await inbox.close();
      await server.close();
    }
  });
});
