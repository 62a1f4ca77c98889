import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { OABadRequestError, OAClient, OAValidationError } from '../../src/index.js';
import type { UploadProgress } from '../../src/uploads/types.js';
import { listen } from '../helpers/listen.js';
import { parseMultipart, type ReceivedPart, sha256 } from '../helpers/multipart.js';
import { tokenPair } from '../helpers/tokens.js';
import { media, zeroStream } from './support.js';

const API = '/api/v2/public';

/** The spec's success envelope of each upload endpoint (9-11). */
const answers: Record<string, unknown> = {
  image: {
    src_file: 'uploads/2026/11/a1b2c3.png',
    url: 'https://cdn.example.com/uploads/2026/11/a1b2c3.png',
  },
  video: { ticket_id: '5f0c8a9e-2d3b-4c1a-9e8f-7a6b5c4d3e2f' },
  audio: {
    audio_url: 'https://storage.example.com/audio/8d7c6b5a.mp3',
    audio_uuid: '8d7c6b5a-4e3f-4a2b-9c1d-0e9f8a7b6c5d',
    audio_size: 2540,
    audio_duration: 1,
  },
};

interface ReceivedUpload {
  path: string;
  authorization: string | undefined;
  contentLength: string | undefined;
  transferEncoding: string | undefined;
  parts: ReceivedPart[];
}

/**
 * A real HTTP server on loopback that answers the token endpoint, parses every upload with busboy and
 * records its parts; `failFirst` answers that many uploads with a 500 first.
 */
async function startUploadServer(failFirst = 0) {
  const uploads: ReceivedUpload[] = [];
  let failures = failFirst;
  const pair = tokenPair(1);
  const server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const reply = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (path === `${API}/auth/token`) {
      for await (const _ of req);
      return reply(201, { data: pair });
    }
    const kind = /^\/api\/v2\/public\/upload\/(image|video|audio)$/.exec(path)?.[1];
    if (kind === undefined)
      return reply(404, { statusCode: 404, data: { statusCode: 404, code: 'NOT_FOUND' } });
    let parts: ReceivedPart[];
    try {
      parts = await parseMultipart(req.headers, req);
    } catch {
      // The client stopped sending (a refused stream): nothing to record or answer.
      res.destroy();
      return;
    }
    uploads.push({
      path,
      authorization: req.headers.authorization,
      contentLength: req.headers['content-length'],
      transferEncoding: req.headers['transfer-encoding'],
      parts,
    });
    if (failures > 0) {
      failures -= 1;
      return reply(500, {
        statusCode: 500,
        data: { statusCode: 500, code: 'INTERNAL_SERVER_ERROR', info: 'x' },
      });
    }
    return reply(201, { data: answers[kind] });
  });
  return { ...server, uploads, pair };
}

let server: Awaited<ReturnType<typeof startUploadServer>> | undefined;
let client: OAClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function setup(failFirst = 0) {
  server = await startUploadServer(failFirst);
  client = new OAClient({ baseUrl: server.url, apiKey: 'key-123456', apiSecret: 'secret-abcdef' });
  return { client, uploads: server.uploads, token: server.pair.access_token };
}

const method = { image: 'uploadImage', video: 'uploadVideo', audio: 'uploadAudio' } as const;
const field = { image: 'file', video: 'video', audio: 'audio' } as const;

// Every accepted format of the spec, each a real file made by ffmpeg (test/fixtures/media/make.sh).
const formats = [
  ['image', 'sample.jpg', 'image/jpeg'],
  ['image', 'sample.jpeg', 'image/jpeg'],
  ['image', 'sample.png', 'image/png'],
  ['image', 'sample.webp', 'image/webp'],
  ['video', 'sample.mp4', 'video/mp4'],
  ['video', 'sample.avi', 'video/x-msvideo'],
  ['video', 'sample.mkv', 'video/x-matroska'],
  ['video', 'sample.mov', 'video/quicktime'],
  ['video', 'sample.webm', 'video/webm'],
  ['video', 'sample.ogv', 'video/ogg'],
  ['video', 'sample.ogg', 'video/ogg'],
  ['video', 'sample.3gp', 'video/3gpp'],
  ['video', 'sample.3g2', 'video/3gpp2'],
  ['audio', 'sample.mp3', 'audio/mpeg'],
  ['audio', 'sample.wav', 'audio/wav'],
  ['audio', 'sample.ogg', 'audio/ogg'],
  ['audio', 'sample.m4a', 'audio/mp4'],
  ['audio', 'sample.aac', 'audio/aac'],
] as const;

describe('the public upload methods send one multipart part the server can take', () => {
  it.each(formats)('%s %s goes out as %s', async (kind, name, contentType) => {
    const { client, uploads, token } = await setup();
    const file = media(name);
    const progress: UploadProgress[] = [];
    const result = await client[method[kind]](file.path, { onProgress: (p) => progress.push(p) });

    expect(result).toEqual(answers[kind]);
    expect(uploads).toHaveLength(1);
    const [upload] = uploads;
    expect(upload?.path).toBe(`${API}/upload/${kind}`);
    expect(upload?.authorization).toBe(`Bearer ${token}`);
    expect(upload?.contentLength).toMatch(/^\d+$/);
    expect(upload?.parts).toEqual([
      {
        field: field[kind],
        filename: name,
        contentType,
        size: file.bytes.length,
        sha256: sha256(file.bytes),
      },
    ]);
    expect(progress.at(-1)).toEqual({ loaded: file.bytes.length, total: file.bytes.length });
  });

  it('a retried upload sends a fresh body with the same bytes, and progress starts again from 0', async () => {
    const { client, uploads } = await setup(1);
    const file = media('sample.mp4');
    const progress: UploadProgress[] = [];
    await client.uploadVideo(file.bytes, { onProgress: (p) => progress.push(p) });
    expect(uploads).toHaveLength(2);
    for (const upload of uploads) {
      expect(upload.parts).toEqual([
        {
          field: 'video',
          filename: 'video.mp4',
          contentType: 'video/mp4',
          size: file.bytes.length,
          sha256: sha256(file.bytes),
        },
      ]);
    }
    expect(progress.filter((p) => p.loaded === 0)).toHaveLength(2);
    expect(progress.at(-1)).toEqual({ loaded: file.bytes.length, total: file.bytes.length });
  });

  it('a stream of unknown length goes out chunked, whole', async () => {
    const { client, uploads } = await setup();
    const head = media('sample.mp3').bytes;
    const total = 1_000_000;
    await client.uploadAudio(zeroStream(head, total), { filename: 'voice.mp3' });
    expect(uploads[0]?.transferEncoding).toBe('chunked');
    expect(uploads[0]?.parts).toEqual([
      {
        field: 'audio',
        filename: 'voice.mp3',
        contentType: 'audio/mpeg',
        size: total,
        sha256: sha256(Buffer.concat([head, Buffer.alloc(total - head.length)])),
      },
    ]);
  });

  it('a refused file never reaches the server', async () => {
    const { client, uploads } = await setup();
    await expect(client.uploadImage(media('sample.gif').path)).rejects.toThrowError(OAValidationError);
    await expect(client.uploadImage(Readable.from([Buffer.from('hello')]))).rejects.toThrowError(
      /uploadImage: the stream is not a recognised image/,
    );
    expect(uploads).toHaveLength(0);
  });

  it('a stream of unknown length that passes the limit stops with an OAValidationError', async () => {
    const { client } = await setup();
    const error = await client.uploadImage(zeroStream(media('sample.png').bytes, 6 * 1024 * 1024)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OAValidationError);
    expect((error as OAValidationError).message).toMatch(
      /^uploadImage: image\.png is larger than 5 MB, the limit/,
    );
  });
});

describe("the server's answer to an upload", () => {
  it('an unsupported audio type in the top-level layout: OABadRequestError with its info', async () => {
    const pair = tokenPair(1);
    const server = await listen(async (req: IncomingMessage, res: ServerResponse) => {
      for await (const _ of req);
      const reply = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === `${API}/auth/token`) return reply(201, { data: pair });
      // The spec shows this error with its fields at the top level rather than inside `data`.
      reply(400, { statusCode: 400, code: 'BAD_REQUEST', info: 'Invalid audio file type: audio/mpeg' });
    });
    const client = new OAClient({ baseUrl: server.url, apiKey: 'k-123456', apiSecret: 's-123456' });
    try {
      const error = await client.uploadAudio(media('sample.mp3').path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OABadRequestError);
      expect(error).toMatchObject({
        status: 400,
        code: 'BAD_REQUEST',
        info: 'Invalid audio file type: audio/mpeg',
        path: `${API}/upload/audio`,
        deliveryUnknown: false,
      });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
