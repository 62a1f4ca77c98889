// What the webhook accepts, the inbox can store: an event nested 20,000 levels deep (in a field the
// reader does not know) passes JSON.parse but not the JSON.stringify that stores it, so it used to be
// answered 500 forever and redelivered forever. Such a body is refused up front with a 400 that says
// why; an event nested as deep as the limit allows is stored and processed. Real redis-server.
import { afterEach, describe, expect, it } from 'vitest';
import { createInbox, type Inbox } from '../../src/queue/index.js';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { listen, post, textEvent } from '../webhook/support.js';

/** A text event whose unknown field `extra` holds objects nested `levels` deep, as JSON text. */
function nestedEvent(levels: number, seq: number): string {
  const event = JSON.stringify({ ...textEvent('deep', seq), extra: '\u0000' });
  return event.replace('"\\u0000"', `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`);
}

describe.skipIf(!REDIS_SERVER)('inbox and deeply nested events', () => {
  const shared = useRedisServer();
  let inbox: Inbox | undefined;

  afterEach(async () => {
    await inbox?.close();
    inbox = undefined;
  });

  it('20,000 levels: a clear 400 from both handlers (never 500), nothing stored', async () => {
    inbox = createInbox({ connection: { url: shared.server.url }, name: 'deep' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const server = await listen((req, res) => void handler(req, res));
    const body = nestedEvent(20_000, 1);
    expect(() => JSON.parse(body)).not.toThrow();
    try {
      const answer = await post(server.url, body);
      expect(answer.status).toBe(400);
      expect(String(answer.json?.error)).toMatch(/nested deeper than \d+ levels/);
    } finally {
      await server.close();
    }
    const fetchHandler = createFetchWebhookHandler({ onEvent: inbox.store });
    const response = await fetchHandler(new Request('http://x/hook', { method: 'POST', body }));
    expect(response.status).toBe(400);
    // The limit is 64 levels: one more than the event of the next test.
    const justOver = await fetchHandler(
      new Request('http://x/hook', { method: 'POST', body: nestedEvent(64, 3) }),
    );
    expect(justOver.status).toBe(400);
    expect(await shared.redis.llen('bull:deep:wait')).toBe(0);
  });

  it('an event as deep as the handler accepts is stored and processed', async () => {
    inbox = createInbox({ connection: { url: shared.server.url }, name: 'deep-ok' });
    const handler = createWebhookHandler({ onEvent: inbox.store });
    const server = await listen((req, res) => void handler(req, res));
    try {
      // The envelope is the first level, `extra` starts at the second: 64 levels in all.
      expect((await post(server.url, nestedEvent(63, 2))).status).toBe(200);
    } finally {
      await server.close();
    }
    const seen: WebhookEvent[] = [];
    const worker = inbox.work((event) => {
      seen.push(event);
    });
    const deadline = Date.now() + 15_000;
    while (seen.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    await worker.close();
    expect(seen).toHaveLength(1);
    let depth = 0;
    for (let level: unknown = seen[0]?.raw.extra; level; level = (level as { a?: unknown }).a) depth++;
    expect(depth).toBe(63);
  });
});
