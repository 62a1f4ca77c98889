/**
 * Property tests: whatever arrives (random JSON, random bytes, events with random parts), the handlers
 * answer 2xx or 4xx, never crash, never leave an unhandled rejection; and whatever the parser accepts, the
 * content helpers can read.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  getMessageMedia,
  getMessageText,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { eventLike, validEvent } from './arbitraries.js';
import { listen, recordingLogger, trackUnhandledRejections } from './support.js';

const anyBody = fc.oneof(
  validEvent.map((value) => JSON.stringify(value)),
  eventLike.map((value) => JSON.stringify(value)),
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string(),
  fc.uint8Array({ maxLength: 512 }),
);
const method = fc.oneof(
  { weight: 8, arbitrary: fc.constant('POST') },
  fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE'),
);

const accepted: WebhookEvent[] = [];
const onEvent = (event: WebhookEvent) => {
  // What the parser accepts, the helpers must read without throwing.
  getMessageText(event);
  getMessageMedia(event, { imageVariant: 'thumbnail' });
  accepted.push(event);
};
const unhandled = trackUnhandledRejections();

const isTwoOrFour = (status: number) => (status >= 200 && status < 300) || (status >= 400 && status < 500);

describe('webhook fuzzing', () => {
  it('node handler over node:http answers every random request with 2xx/4xx', async () => {
    const { lines, logger } = recordingLogger();
    const server = await listen(createWebhookHandler({ onEvent, logger, maxBodyBytes: 4096, dedupe: true }));
    try {
      await fc.assert(
        fc.asyncProperty(method, anyBody, async (verb, body) => {
          const response = await fetch(server.url, { method: verb, body: verb === 'GET' ? null : body });
          const status = response.status;
          const answer = await response.json();
          expect(isTwoOrFour(status), `status ${status}: ${JSON.stringify(answer)}`).toBe(true);
        }),
        { numRuns: 400 },
      );
    } finally {
      await server.close();
    }
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(unhandled).toEqual([]);
  });

  it('fetch handler answers every random request with 2xx/4xx', async () => {
    const handler = createFetchWebhookHandler({ onEvent, maxBodyBytes: 4096 });
    await fc.assert(
      fc.asyncProperty(method, anyBody, async (verb, body) => {
        const request = new Request('http://x/hook', { method: verb, body: verb === 'GET' ? null : body });
        const response = await handler(request);
        expect(isTwoOrFour(response.status)).toBe(true);
        expect(await response.json()).toBeTypeOf('object');
      }),
      { numRuns: 600 },
    );
    expect(unhandled).toEqual([]);
  });

  it('every event Tencent could send is accepted (200), through both handlers', async () => {
    const node = await listen(createWebhookHandler({ onEvent }));
    const viaFetch = createFetchWebhookHandler({ onEvent });
    const before = accepted.length;
    try {
      await fc.assert(
        fc.asyncProperty(validEvent, async (event) => {
          const body = JSON.stringify(event);
          const answers = [
            await fetch(node.url, { method: 'POST', body }),
            await viaFetch(new Request('http://x/hook', { method: 'POST', body })),
          ];
          for (const answer of answers) expect(answer.status, await answer.text()).toBe(200);
        }),
        { numRuns: 200 },
      );
    } finally {
      await node.close();
    }
    expect(accepted.length - before).toBe(400);
  });
});
