// Uploads from web inputs (Blob, ArrayBuffer, Uint8Array, a web ReadableStream, { data, filename }) on
// both transports: undici's form-data stream and fetch's FormData. What the fake stored is what was
// read: bytes, name and type.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { type FileInput, OAClient, OAValidationError } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejection } from '../helpers/client-fixture.js';
import { media } from './support.js';

let mock: MockServer | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await mock?.close();
  client = undefined;
  mock = undefined;
});

const png = media('sample.png');
const bytes = new Uint8Array(png.bytes);
const sha256 = createHash('sha256').update(bytes).digest('hex');

const webStream = (data: Uint8Array, chunk = 1000) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < data.length; at += chunk) controller.enqueue(data.slice(at, at + chunk));
      controller.close();
    },
  });

const INPUTS: [string, () => FileInput, string][] = [
  ['a Blob', () => new Blob([bytes], { type: 'image/png' }), 'image.png'],
  ['a File', () => new File([bytes], 'cat.png'), 'cat.png'],
  ['an ArrayBuffer', () => bytes.slice().buffer, 'image.png'],
  ['a Uint8Array', () => bytes.slice(), 'image.png'],
  ['a web ReadableStream', () => webStream(bytes), 'image.png'],
  ['{ data, filename }', () => ({ data: webStream(bytes), filename: 'named.png' }), 'named.png'],
];

describe.each([
  ['undici', false],
  ['fetch', true],
])('uploads from web inputs, %s transport', (_name, useFetch) => {
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

  it.each(INPUTS)('%s goes out whole, named and typed', async (_label, make, filename) => {
    const { fake, oa } = await start();
    const progress: number[] = [];
    const result = await oa.uploadImage(make(), { onProgress: (p) => progress.push(p.loaded) });
    expect(result.url).toMatch(/\.png$/);
    expect(fake.uploads).toMatchObject([
      { kind: 'image', filename, contentType: 'image/png', size: bytes.length, sha256 },
    ]);
    expect(progress[0]).toBe(0);
    expect(progress.at(-1)).toBe(bytes.length);
  });

  it('refuses a stream that is not an image before anything is sent', async () => {
    const { fake, oa } = await start();
    const error = await rejection(
      oa.uploadImage(webStream(new TextEncoder().encode('just text, not a png'))),
    );
    expect(error).toBeInstanceOf(OAValidationError);
    expect(error.message).toMatch(/^uploadImage: the stream is not a recognised image.*looks like text/);
    expect(fake.requests).toEqual([]);
  });

  it('refuses a web stream of unknown length past the limit, having sent no complete upload', async () => {
    const { fake, oa } = await start();
    const big = new Uint8Array(5 * 1024 * 1024 + 1);
    big.set(bytes);
    const error = await rejection(oa.uploadImage(webStream(big, 256 * 1024)));
    expect(error).toBeInstanceOf(OAValidationError);
    expect(error.message).toMatch(/is larger than 5 MB, the limit/);
    expect(fake.uploads).toEqual([]);
  });
});
