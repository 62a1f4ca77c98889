import type { ExpectStatic } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';

/**
 * For a fake whose videos convert until told (a `transcodeMs` longer than any test): once a send of a
 * video has met "still converting", ends every transcode. A test that must see the SDK wait for a
 * transcode starts its send, awaits this, then awaits the send: a short `transcodeMs` instead may pass
 * before the send leaves on a loaded machine, and the send then meets no wait. `expect` is the test's
 * (its context's, where tests run concurrently: see test/conventions/concurrent-expect.test.ts).
 */
export async function endTranscodesOnceWaitedFor(expect: ExpectStatic, mock: MockServer): Promise<void> {
  await expect
    .poll(() => mock.requests.some((r) => r.status === 400 && r.path.endsWith('/broadcast-video')), {
      timeout: 15_000,
      interval: 20,
    })
    .toBe(true);
  mock.completeTranscodes();
}
