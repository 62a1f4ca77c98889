// sendVideo's transcode wait, against the fake OA server: the send lands soon after the video is
// ready, whatever the time it took, without polling more than a few times per doubling of the wait.
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';

const clip = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));

/** Each ready time, ms after the upload. */
const READY_MS = [500, 1_000, 2_000, 3_500, 5_000, 10_000];
/** The send's own request, and timers on a busy machine. */
const REQUEST_MS = 150;

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

/** Uploads a video that converts for `readyMs`, then measures sendVideo and counts its polls. */
async function waitOut(readyMs: number): Promise<{ readyMs: number; tookMs: number; polls: number }> {
  const mock: MockServer = await createMockServer({ transcodeMs: readyMs });
  open.push(mock);
  const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  open.push(client);
  const { ticket_id } = await client.uploadVideo(clip);
  // The fake starts the transcode on the upload's arrival, before this point: the ready time counted
  // from here is at most `readyMs`.
  const started = performance.now();
  expect(await client.sendVideo({ user_id: 'user-1', ticket_id })).toBe('success');
  const tookMs = performance.now() - started;
  const polls = mock.requests.filter((r) => r.path.endsWith('/webhook/broadcast-video')).length;
  expect(mock.deliveries.filter((d) => d.endpoint === 'sendVideo')).toHaveLength(1);
  return { readyMs, tookMs, polls };
}

describe('sendVideo waits for the transcode', () => {
  it('resolves within a quarter more than the time the video took to be ready, in few polls', async () => {
    // One fake server each, all at once: the waits are independent, and the test takes ~12 s, not 25.
    const outcomes = await Promise.all(READY_MS.map(waitOut));
    for (const { readyMs, tookMs, polls } of outcomes) {
      expect({ readyMs, tookMs: Math.round(tookMs) }).toEqual({
        readyMs,
        tookMs: expect.toSatisfy((ms: number) => ms <= 1.25 * readyMs + REQUEST_MS),
      });
      // A poll at most each quarter of the time waited so far (after the first second, a few per
      // doubling): 16 for 10 s, the last one the send that is delivered.
      expect({ readyMs, polls }).toEqual({ readyMs, polls: expect.toSatisfy((n: number) => n <= 16) });
    }
  }, 30_000);
});
