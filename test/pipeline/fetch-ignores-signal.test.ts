// A `fetch` that ignores the AbortSignal (a wrapper that rebuilds init without it) against a real
// server on loopback that never answers, or answers a body that never ends: the SDK's own limits (the
// client's timeoutMs, the call's deadline, the signal, close()) bound the call whatever the fetch does.
// A send that may have left says deliveryUnknown; a token request and an upload settle too.
import { afterEach, describe, expect, it } from 'vitest';
import {
  OAAbortError,
  OAClient,
  type OAClientOptions,
  OAConnectionError,
  OATimeoutError,
} from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { API } from '../helpers/client-fixture.js';
import { json, type RawServer, startRawServer } from '../helpers/raw-server.js';
import { tokenPair } from '../helpers/tokens.js';
import { media } from '../uploads/support.js';

let server: RawServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

/** A fetch that drops the signal: the request goes on, and its answer is awaited, whatever the SDK asks. */
const deafFetch: typeof fetch = (input, init) => {
  const { signal: _ignored, ...rest } = init ?? {};
  return globalThis.fetch(input, rest);
};

type Fault = 'never answers' | 'body never ends';

/** Answers tokens unless `tokensToo`; every other request meets `fault`. */
async function start(fault: Fault, options: Partial<OAClientOptions> = {}, tokensToo = false) {
  server = await startRawServer((req, res) => {
    if (!tokensToo && req.url === `${API}/auth/token`) return json(res, 201, { data: tokenPair(1) });
    if (fault === 'body never ends') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data":');
    }
  });
  client = new OAClient({
    baseUrl: server.url,
    apiKey: 'key-123456',
    apiSecret: 'secret-abcdef',
    fetch: deafFetch,
    rateLimit: false,
    ...options,
  });
  return { oa: client, hits: server.hits };
}

const params = { user_id: 'u-1', msg: 'hello' };
const sends = (hits: RawServer['hits']) => hits.filter((h) => h.path.endsWith('/broadcast-message')).length;

describe.each<Fault>(['never answers', 'body never ends'])(
  'a fetch that ignores the signal; the server %s',
  (fault) => {
    it('a send ends at the call deadline: OATimeoutError, deliveryUnknown, sent once', async () => {
      const { oa, hits } = await start(fault);
      const error = await rejectsWithin(oa.sendText(params, { timeoutMs: 1000 }), 4000, 'sendText');
      expect(error).toBeInstanceOf(OATimeoutError);
      expect(error).toMatchObject({ deliveryUnknown: true });
      expect(sends(hits)).toBe(1);
    });

    it("a send ends at the client's timeoutMs: OATimeoutError, deliveryUnknown, not retried", async () => {
      const { oa, hits } = await start(fault, { timeoutMs: 1000 });
      const error = await rejectsWithin(oa.sendText(params), 4000, 'sendText');
      expect(error).toBeInstanceOf(OATimeoutError);
      expect(error).toMatchObject({ deliveryUnknown: true });
      expect(sends(hits)).toBe(1);
    });

    it('a send ends when its signal fires: OAAbortError, deliveryUnknown', async () => {
      const { oa, hits } = await start(fault);
      const abort = new AbortController();
      const pending = oa.sendText(params, { signal: abort.signal });
      await expect.poll(() => sends(hits), { timeout: 4000, interval: 10 }).toBe(1);
      abort.abort(new Error('user gave up'));
      const error = await rejectsWithin(pending, 4000, 'sendText');
      expect(error).toBeInstanceOf(OAAbortError);
      expect(error).toMatchObject({ deliveryUnknown: true });
    });

    it('a send ends when the client is closed: OAConnectionError, deliveryUnknown', async () => {
      const { oa, hits } = await start(fault);
      const pending = oa.sendText(params);
      await expect.poll(() => sends(hits), { timeout: 4000, interval: 10 }).toBe(1);
      void oa.close();
      const error = await rejectsWithin(pending, 4000, 'sendText');
      expect(error).toBeInstanceOf(OAConnectionError);
      expect(error).toMatchObject({ deliveryUnknown: true });
      expect((error as Error).message).toMatch(/the client was closed/);
    });

    it('generateToken ends at the call deadline: OATimeoutError', async () => {
      const { oa } = await start(fault, {}, true);
      const error = await rejectsWithin(oa.generateToken({ timeoutMs: 1000 }), 4000, 'generateToken');
      expect(error).toBeInstanceOf(OATimeoutError);
    });

    it('an upload ends at the call deadline: OATimeoutError, no delivery to be unknown', async () => {
      const { oa } = await start(fault);
      const png = media('sample.png').bytes;
      const error = await rejectsWithin(oa.uploadImage(png, { timeoutMs: 1500 }), 4500, 'uploadImage');
      expect(error).toBeInstanceOf(OATimeoutError);
      expect(error).toMatchObject({ deliveryUnknown: false });
    });
  },
);
