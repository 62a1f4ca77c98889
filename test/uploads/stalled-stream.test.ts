// An upload from a caller's stream that gives a few bytes, then nothing: every read of it is inside the
// call's deadline, its AbortSignal and close(), on both transports, whether the stream stalls while
// its first bytes are read (to detect the format) or later (the fetch transport reads it into memory
// before the request leaves). The call settles with the error that says why, the stream is destroyed
// or cancelled, and no upload reaches the server.
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type FileInput,
  OAAbortError,
  OAClient,
  OAConnectionError,
  OATimeoutError,
} from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { media } from './support.js';

let mock: MockServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await mock?.close();
  client = undefined;
  mock = undefined;
});

const png = new Uint8Array(media('sample.png').bytes);
/** A real PNG's first 200 bytes: fewer than the format check reads. */
const HEAD = png.slice(0, 200);
/** The whole PNG, then zeros: enough for the format check, so the stall comes after it. */
const LONG_HEAD = new Uint8Array(5000);
LONG_HEAD.set(png);

/** A stream that yields `head`, then never ends; `released()` says whether it was destroyed or cancelled. */
type Stalled = { input: FileInput; released: () => boolean };

const STREAMS: [string, (head: Uint8Array) => Stalled][] = [
  [
    'a Node Readable',
    (head) => {
      const stream = new Readable({ read() {} });
      stream.push(Buffer.from(head));
      return { input: { data: stream }, released: () => stream.destroyed };
    },
  ],
  [
    'a web ReadableStream',
    (head) => {
      let cancelled = false;
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(head.slice());
        },
        cancel() {
          cancelled = true;
        },
      });
      return { input: { data: stream }, released: () => cancelled };
    },
  ],
];

const STALLS: [string, Uint8Array][] = [
  ['while its first bytes are read', HEAD],
  ['after its first bytes', LONG_HEAD],
];

describe.each([
  ['undici', false],
  ['fetch', true],
])('an upload from a stalled stream, %s transport', (_transport, useFetch) => {
  async function start() {
    mock = await createMockServer({ rateLimit: false });
    client = new OAClient({
      baseUrl: mock.url,
      apiKey: mock.apiKey,
      apiSecret: mock.apiSecret,
      ...(useFetch ? { fetch: globalThis.fetch } : {}),
    });
    return { fake: mock, oa: client };
  }
  const uploadsSeen = (fake: MockServer) => fake.requests.filter((r) => r.path.endsWith('/upload/image'));

  describe.each(STREAMS)('%s', (_stream, stalled) => {
    it.each(STALLS)('ends at the deadline when it stalls %s: OATimeoutError', async (_when, head) => {
      const { fake, oa } = await start();
      const { input, released } = stalled(head);
      const error = await rejectsWithin(oa.uploadImage(input, { timeoutMs: 1500 }), 5000, 'uploadImage');
      expect(error).toBeInstanceOf(OATimeoutError);
      expect((error as OATimeoutError).deliveryUnknown).toBe(false);
      expect((error as Error).message).toMatch(/timeoutMs of 1500 ms ran out/);
      expect(released()).toBe(true);
      expect(uploadsSeen(fake)).toEqual([]);
    });

    it.each(STALLS)('ends when its signal fires as it stalls %s: OAAbortError', async (_when, head) => {
      const { fake, oa } = await start();
      const { input, released } = stalled(head);
      const abort = new AbortController();
      const pending = oa.uploadImage(input, { signal: abort.signal });
      setTimeout(() => abort.abort(new Error('user gave up')), 300);
      const error = await rejectsWithin(pending, 5000, 'uploadImage');
      expect(error).toBeInstanceOf(OAAbortError);
      expect((error as OAAbortError).deliveryUnknown).toBe(false);
      expect(released()).toBe(true);
      expect(uploadsSeen(fake)).toEqual([]);
    });

    it('ends when the client is closed as the call starts, before the stream is read: released by then', async () => {
      const { fake, oa } = await start();
      const { input, released } = stalled(HEAD);
      const pending = oa.uploadImage(input);
      void oa.close();
      const error = await rejectsWithin(pending, 5000, 'uploadImage');
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as Error).message).toMatch(/the client was closed/);
      expect(released()).toBe(true);
      expect(uploadsSeen(fake)).toEqual([]);
    });

    it.each(STALLS)('ends when the client is closed as it stalls %s', async (_when, head) => {
      const { fake, oa } = await start();
      const { input, released } = stalled(head);
      const pending = oa.uploadImage(input);
      setTimeout(() => void oa.close(), 300);
      const error = await rejectsWithin(pending, 5000, 'uploadImage');
      expect(error).toBeInstanceOf(OAConnectionError);
      expect((error as Error).message).toMatch(/the client was closed/);
      expect(released()).toBe(true);
      expect(uploadsSeen(fake)).toEqual([]);
    });
  });
});
