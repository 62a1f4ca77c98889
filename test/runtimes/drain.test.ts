/**
 * Answer-first on a long-running server in Bun and Deno (test/runtimes/app/drain.mjs, the built
 * package): the 200 comes before onEvent finishes, SIGTERM makes the app call `handler.close()`, a
 * delivery during it answers 503, and the process ends only once onEvent has finished.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { announcedUrl, distMissing, findRuntime, runArgs, type Served, serveChild } from './support.js';

const APP_FILE = fileURLToPath(new URL('./app/drain.mjs', import.meta.url));

const EVENT = {
  event_type: 'message',
  username: 'oa_shop',
  timestamp: '2019-05-10T09:38:46.000Z',
  data: {
    From_Account: 'user_42',
    To_Account: 'oa_shop',
    MsgKey: '1_2837546_1557481126',
    MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' } }],
  },
};

const deliver = (url: string, seq: number) =>
  fetch(`${url}/oa/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...EVENT, data: { ...EVENT.data, MsgKey: `${seq}_2837546_1557481126` } }),
    signal: AbortSignal.timeout(5_000),
  });

/** The status of a POST to `url`, its body discarded; 0 when the request failed. */
const statusOf = (answer: Promise<Response>) =>
  answer.then(
    async (response) => {
      await response.body?.cancel();
      return response.status;
    },
    () => 0,
  );

/** Waits (bounded) until the child's output has `line`. */
async function printed(served: Served, line: string) {
  await expect.poll(() => served.output(), { timeout: 10_000 }).toContain(line);
}

let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
});

for (const runtime of ['bun', 'deno'] as const) {
  const found = findRuntime(runtime);
  const skip = 'missing' in found ? found.missing : distMissing();
  if (skip) console.warn(`the ${runtime} drain test skipped: ${skip}`);

  describe.skipIf(skip !== undefined)(`${runtime}: waitUntil: true and close() on SIGTERM`, () => {
    it('answers before onEvent finishes, refuses deliveries while draining, and ends after onEvent', async () => {
      served = await serveChild((found as { bin: string }).bin, runArgs(runtime, APP_FILE), {}, announcedUrl);
      const app = served;
      const first = await deliver(app.url, 1);
      expect(first.status, app.output()).toBe(200);
      await first.body?.cancel();
      await printed(app, 'onEvent started');
      expect(app.output()).not.toContain('onEvent finished');

      const pid = Number(/pid (\d+)/.exec(app.output())?.[1]);
      process.kill(pid, 'SIGTERM');
      // The app closes the handler: the next delivery is refused (polled: the signal takes a moment).
      const late = () => statusOf(deliver(app.url, 2));
      await expect.poll(late, { timeout: 10_000 }).toBe(503);
      expect(app.output()).not.toContain('drained');

      // Polled too: a runtime may close a kept-alive connection after the 503, which fails one fetch.
      const release = () =>
        statusOf(fetch(`${app.url}/release`, { method: 'POST', signal: AbortSignal.timeout(5_000) }));
      await expect.poll(release, { timeout: 10_000 }).toBe(200);
      await printed(app, 'drained');
      const output = app.output();
      expect(output.indexOf('onEvent finished')).toBeGreaterThan(-1);
      expect(output.indexOf('onEvent finished')).toBeLessThan(output.indexOf('drained'));
    });
  });
}
