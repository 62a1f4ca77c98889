// Upload once: the answer of an upload is reused for the same bytes (their SHA-256, under the endpoint
// and the api key), in the client's memory; a stream is uploaded every time. Against the fake server.
import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { OAAbortError, OAApiError, OAClient, type OAClientOptions, OAConfigError } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejection } from '../helpers/client-fixture.js';
import { media } from './support.js';

const image = media('sample.png');
const other = media('sample.jpg');
const audio = media('sample.mp3');
const video = media('sample.mp4');

let mock: MockServer | undefined;
const clients: OAClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await mock?.close();
  mock = undefined;
});

async function setup(options: Partial<OAClientOptions> = {}, mockOptions = {}) {
  mock = await createMockServer(mockOptions);
  const client = new OAClient({
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
    ...options,
  });
  clients.push(client);
  return { mock, client };
}

/** Upload requests the fake received at `/upload/<kind>`. */
const uploads = (kind: 'image' | 'audio' | 'video') =>
  mock?.requests.filter((r) => r.path === `/api/v2/public/upload/${kind}`).length ?? 0;

describe('uploads reused for the same bytes', () => {
  it('the same bytes uploaded twice make one upload request and give the same answer', async () => {
    const { client } = await setup();
    const first = await client.uploadImage(image.bytes);
    const second = await client.uploadImage(Buffer.from(image.bytes));
    expect(second).toEqual(first);
    expect(uploads('image')).toBe(1);

    // A path, a Blob and an ArrayBuffer of the same bytes: the bytes count, not how they came.
    expect(await client.uploadImage(image.path)).toEqual(first);
    expect(await client.uploadImage(new Blob([image.bytes]))).toEqual(first);
    const copy = new Uint8Array(image.bytes);
    expect(await client.uploadImage(copy.buffer)).toEqual(first);
    expect(await client.uploadImage({ data: image.path, filename: 'other-name.png' })).toEqual(first);
    expect(uploads('image')).toBe(1);
  });

  it('audio and video answers are reused too, each under its own endpoint', async () => {
    const { client } = await setup();
    const a1 = await client.uploadAudio(audio.path);
    const a2 = await client.uploadAudio(audio.bytes);
    expect(a2).toEqual(a1);
    const v1 = await client.uploadVideo(video.path);
    const v2 = await client.uploadVideo(video.path);
    expect(v2).toEqual(v1);
    expect([uploads('audio'), uploads('video')]).toEqual([1, 1]);
  });

  it('different bytes make two upload requests', async () => {
    const { client } = await setup();
    const first = await client.uploadImage(image.bytes);
    const second = await client.uploadImage(other.bytes);
    expect(second.url).not.toBe(first.url);
    expect(uploads('image')).toBe(2);
  });

  it('concurrent uploads of the same bytes make one request', async () => {
    // Each upload answers after 300 ms: the others start while the first is in flight.
    const { client, mock } = await setup();
    mock.injectFault({ kind: 'delay', delayMs: 300 }, { path: '/upload/video', times: 1 });
    const answers = await Promise.all([
      client.uploadVideo(video.path),
      client.uploadVideo(video.bytes),
      client.uploadVideo(video.path),
    ]);
    expect(new Set(answers.map((a) => a.ticket_id)).size).toBe(1);
    expect(uploads('video')).toBe(1);
  });

  it('a call waiting on another whose caller aborted it uploads by itself', async () => {
    const { client, mock } = await setup();
    mock.injectFault({ kind: 'delay', delayMs: 1000 }, { path: '/upload/video', times: 1 });
    const abort = new AbortController();
    const first = client.uploadVideo(video.path, { signal: abort.signal });
    const firstError = rejection(first);
    const second = client.uploadVideo(video.bytes);
    await new Promise((resolve) => setTimeout(resolve, 200));
    abort.abort();
    expect(await firstError).toBeInstanceOf(OAAbortError);
    const answer = await second;
    expect(answer.ticket_id).toMatch(/^[0-9a-f-]{36}$/);
    // Reused from now on.
    expect(await client.uploadVideo(video.path)).toEqual(answer);
  });

  it('a failed upload keeps nothing: the next one uploads again', async () => {
    const { client, mock } = await setup();
    mock.injectFault(
      { kind: 'error', status: 400, code: 'BAD_REQUEST', info: 'no' },
      { path: '/upload/image' },
    );
    expect(await rejection(client.uploadImage(image.bytes))).toBeInstanceOf(OAApiError);
    const answer = await client.uploadImage(image.bytes);
    expect(answer.url).toContain('http');
    expect(uploads('image')).toBe(2);
  });

  it('a Node Readable is uploaded each time', async () => {
    const { client } = await setup();
    const first = await client.uploadImage(Readable.from([image.bytes]));
    const second = await client.uploadImage(Readable.from([image.bytes]));
    expect(second.url).not.toBe(first.url);
    // Nor does a stream's upload leave an answer that bytes would reuse.
    await client.uploadImage(image.bytes);
    expect(uploads('image')).toBe(3);
  });

  it('a web ReadableStream is uploaded each time', async () => {
    const { client } = await setup();
    await client.uploadImage(new Blob([image.bytes]).stream());
    await client.uploadImage(new Blob([image.bytes]).stream());
    expect(uploads('image')).toBe(2);
  });

  it('reuseUploads: false uploads every time', async () => {
    const { client } = await setup({ reuseUploads: false });
    const first = await client.uploadImage(image.bytes);
    const second = await client.uploadImage(image.bytes);
    expect(second.url).not.toBe(first.url);
    expect(uploads('image')).toBe(2);
  });

  it('an answer is reused for ttlMs only', async () => {
    const { client } = await setup({ reuseUploads: { ttlMs: 1000 } });
    await client.uploadImage(image.bytes);
    await client.uploadImage(image.bytes);
    expect(uploads('image')).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await client.uploadImage(image.bytes);
    expect(uploads('image')).toBe(2);
  });

  it('the one-call helpers upload once and send each time', async () => {
    const { client, mock } = await setup({}, { transcodeMs: 0 });
    const progress: number[] = [];
    await client.sendImageFile('u1', image.path);
    await client.sendImageFile('u2', image.bytes, { onProgress: (p) => progress.push(p.loaded) });
    await client.sendAudioFile('u1', audio.path);
    await client.sendAudioFile('u2', audio.path);
    await client.sendVideoFile('u1', video.path);
    await client.sendVideoFile('u2', video.path);
    expect([uploads('image'), uploads('audio'), uploads('video')]).toEqual([1, 1, 1]);
    expect(mock.deliveries.map((d) => [d.endpoint, d.user_ids])).toEqual([
      ['sendImage', ['u1']],
      ['sendImage', ['u2']],
      ['sendAudio', ['u1']],
      ['sendAudio', ['u2']],
      ['sendVideo', ['u1']],
      ['sendVideo', ['u2']],
    ]);
    // A reused answer still tells onProgress that the whole file is done.
    expect(progress).toEqual([image.bytes.length]);
  });

  it('a file is still checked first: bad bytes are refused, whatever was uploaded before', async () => {
    const { client } = await setup();
    const notImage = readFileSync(media('not-an-image.png').path);
    const error = await rejection(client.uploadImage(notImage));
    expect(error.name).toBe('OAValidationError');
    expect(uploads('image')).toBe(0);
  });

  it('a reuseUploads that is not true, false or { ttlMs } is refused', () => {
    const base = { baseUrl: 'http://127.0.0.1:1', apiKey: 'key', apiSecret: 'secret-123' };
    for (const reuseUploads of ['yes', { ttlMs: 0 }, { ttlMs: -1 }, null]) {
      expect(
        () => new OAClient({ ...base, reuseUploads } as unknown as OAClientOptions),
        JSON.stringify(reuseUploads),
      ).toThrow(OAConfigError);
    }
    expect(() => new OAClient({ ...base, reuseUploads: { ttlMs: 60_000 } })).not.toThrow();
  });
});
