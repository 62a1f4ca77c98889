import { once } from 'node:events';
import { expect, it } from 'vitest';
import { OAInternalServerError } from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';

const { setup } = clientFixture();

const CHUNK = Buffer.from(`<p>${'x'.repeat(64 * 1024 - 8)}</p>\n`);
const TOTAL = 50 * 1024 * 1024;

it('an error body is kept up to a cap, not read whole: a 502 with 50 MB of HTML', async () => {
  const { client } = await setup(
    tokensThen(async (_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html', 'content-length': String(TOTAL) });
      // Written as it goes, with backpressure: a client that stops reading stops the writer.
      let closed = false;
      res.on('close', () => {
        closed = true;
      });
      for (let sent = 0; sent < TOTAL && !closed; sent += CHUNK.length) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, TOTAL - sent));
        if (!res.write(piece)) await Promise.race([once(res, 'drain'), once(res, 'close')]);
      }
      if (!closed) res.end();
    }),
  );
  const error = await rejectsWithin(client.sendText({ user_id: 'u1', msg: 'x' }), 10_000);
  expect(error).toBeInstanceOf(OAInternalServerError);
  expect((error as OAInternalServerError).deliveryUnknown).toBe(true);
  const body = (error as OAInternalServerError).body;
  const kept = typeof body === 'string' ? body : JSON.stringify(body);
  expect(kept.length).toBeLessThanOrEqual(70_000);
});
