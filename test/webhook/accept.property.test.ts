/**
 * The receiver's contract as a property, through both handlers: any JSON object body gets 2xx and
 * exactly one onEvent; any other body gets 4xx and none; nothing gets 5xx unless onEvent failed (and
 * then the answer is 500 after exactly one call); the process never crashes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/webhook/index.js';
import { eventLike, validEvent } from './arbitraries.js';
import { drivers } from './drivers.js';
import { trackUnhandledRejections } from './support.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The oracle: is this body, as the handler receives it, a JSON object? */
function isJsonObjectBody(body: string | Uint8Array): boolean {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  try {
    const value: unknown = JSON.parse(utf8.decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

const objectBody = fc
  .oneof(validEvent, eventLike, fc.dictionary(fc.string(), fc.jsonValue()), fc.object())
  .map((value) => JSON.stringify(value));
const otherBody = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.string(),
  fc.uint8Array({ maxLength: 256 }),
  // A JSON object cut short or with a stray byte is not one.
  objectBody.map((json) => json.slice(0, -1)),
  objectBody.map((json) => new Uint8Array([...new TextEncoder().encode(json), 0xff])),
);
const anyBody: fc.Arbitrary<string | Uint8Array> = fc.oneof(objectBody, otherBody);

const unhandled = trackUnhandledRejections();

describe.each(Object.entries(drivers))('%s', (_name, start) => {
  it('any JSON object: 2xx and one onEvent; anything else: 4xx; 5xx only when onEvent failed', async () => {
    let calls = 0;
    let failNext = false;
    const driver = await start({
      onEvent: (_event: WebhookEvent) => {
        calls++;
        if (failNext) throw new Error('the app failed');
      },
    });
    try {
      await fc.assert(
        fc.asyncProperty(anyBody, fc.boolean(), async (body, fail) => {
          failNext = fail;
          const before = calls;
          const answer = await driver.send('POST', body);
          const called = calls - before;
          if (isJsonObjectBody(body)) {
            expect(called).toBe(1);
            expect(answer.status).toBe(fail ? 500 : 200);
          } else {
            expect(called).toBe(0);
            expect(answer.status).toBeGreaterThanOrEqual(400);
            expect(answer.status).toBeLessThan(500);
          }
        }),
        { numRuns: 300 },
      );
      // Still serving after all that.
      failNext = false;
      expect((await driver.send('POST', '{}')).status).toBe(200);
    } finally {
      await driver.close();
    }
    expect(unhandled).toEqual([]);
  });
});
