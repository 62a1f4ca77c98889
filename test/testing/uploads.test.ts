import { createHash, randomBytes } from 'node:crypto';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { API, mockServerFixture, PNG_BYTES, post, TIMESTAMP, upload } from './support.js';

const { start } = mockServerFixture();

/** A minimal WAV header for `seconds` of 8 kHz mono 8-bit audio. */
function wav(seconds: number): Uint8Array {
  const data = 8000 * seconds;
  const out = Buffer.alloc(44 + data);
  out.write('RIFF', 0);
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8);
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(8000, 24);
  out.writeUInt32LE(8000, 28);
  out.writeUInt16LE(1, 32);
  out.writeUInt16LE(8, 34);
  out.write('data', 36);
  out.writeUInt32LE(data, 40);
  return out;
}

describe('uploads', () => {
  it('stores an image and serves the exact bytes at its url', async () => {
    const fake = await start();
    const bytes = new Uint8Array([...PNG_BYTES, ...randomBytes(2048)]);
    const res = await upload(fake.url, fake, 'image', { bytes, type: 'image/png', filename: 'cat.png' });
    expect(res.status).toBe(201);
    const { data } = res.body as { data: { src_file: string; url: string } };
    expect(data.src_file).toMatch(/\.png$/);
    expect(data.url).toBe(`${fake.url}/${data.src_file}`);
    const served = await request(data.url);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/png');
    expect(Buffer.from(await served.body.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    // Uploaded images are public: no token needed. The URL works in a send.
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(fake.uploads).toMatchObject([{ kind: 'image', filename: 'cat.png', size: bytes.length, sha256 }]);
    expect(fake.requests.find((r) => r.path.endsWith('/upload/image'))?.parts).toEqual([
      { field: 'file', filename: 'cat.png', contentType: 'image/png', size: bytes.length, sha256 },
    ]);
  });

  it('refuses a file in the wrong multipart field with 400', async () => {
    const fake = await start();
    for (const [kind, field] of [
      ['image', 'image'],
      ['video', 'file'],
      ['audio', 'file'],
    ] as const) {
      const res = await upload(fake.url, fake, kind, {
        field,
        bytes: PNG_BYTES,
        type: 'image/png',
        filename: 'x.png',
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        statusCode: 400,
        data: { code: 'BAD_REQUEST' },
        path: `${API}/upload/${kind}`,
      });
    }
    expect(fake.uploads).toEqual([]);
  });

  it('refuses an unsupported audio type with the top-level error layout', async () => {
    const fake = await start();
    const res = await upload(fake.url, fake, 'audio', {
      bytes: new Uint8Array(100),
      type: 'audio/flac',
      filename: 'a.flac',
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      code: 'BAD_REQUEST',
      info: 'Invalid audio file type: audio/flac',
    });
  });

  it('refuses other unsupported formats in the data layout', async () => {
    const fake = await start();
    const gif = await upload(fake.url, fake, 'image', {
      bytes: new Uint8Array(10),
      type: 'image/gif',
      filename: 'a.gif',
    });
    expect(gif.status).toBe(400);
    expect(gif.body).toMatchObject({
      data: { code: 'BAD_REQUEST', info: 'Invalid image file type: image/gif' },
    });
    // A generic type falls back to the file name's extension for images and videos.
    const generic = await upload(fake.url, fake, 'video', {
      bytes: new Uint8Array(10),
      type: 'application/octet-stream',
      filename: 'clip.mkv',
    });
    expect(generic.status).toBe(201);
  });

  it('refuses files over the size limit', async () => {
    const fake = await start({ maxFileBytes: { image: 1000 } });
    const ok = await upload(fake.url, fake, 'image', {
      bytes: new Uint8Array(1000),
      type: 'image/jpeg',
      filename: 'a.jpg',
    });
    expect(ok.status).toBe(201);
    const big = await upload(fake.url, fake, 'image', {
      bytes: new Uint8Array(1001),
      type: 'image/jpeg',
      filename: 'a.jpg',
    });
    expect(big.status).toBe(400);
    expect(big.body).toMatchObject({ data: { code: 'BAD_REQUEST', info: 'File too large' } });
  });

  it("refuses a real image over the spec's 5 MB", async () => {
    const fake = await start();
    const bytes = new Uint8Array(5 * 1024 * 1024 + 1);
    const res = await upload(fake.url, fake, 'image', { bytes, type: 'image/webp', filename: 'big.webp' });
    expect(res.status).toBe(400);
  });

  it('returns the four audio values, usable as they are in sendAudio', async () => {
    const fake = await start();
    const bytes = wav(3);
    const res = await upload(fake.url, fake, 'audio', { bytes, type: 'audio/wav', filename: 'voice.wav' });
    expect(res.status).toBe(201);
    const { data } = res.body as {
      data: { audio_url: string; audio_uuid: string; audio_size: number; audio_duration: number };
    };
    expect(data).toEqual({
      audio_url: expect.stringMatching(new RegExp(`^${fake.url}/.+\\.wav$`)),
      audio_uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      audio_size: bytes.length,
      audio_duration: 3,
    });
    const served = await request(data.audio_url);
    expect(Buffer.from(await served.body.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    const client = new OAClient({ baseUrl: fake.url, apiKey: fake.apiKey, apiSecret: fake.apiSecret });
    try {
      expect(await client.sendAudio({ user_id: 'u1', ...data })).toBe('success');
    } finally {
      await client.close();
    }
    expect(fake.deliveries).toMatchObject([
      { endpoint: 'sendAudio', items: [{ type: 'audio', msg: data.audio_url }] },
    ]);
  });

  it('needs a bearer token and a multipart body', async () => {
    const fake = await start();
    const anonymous = await post(fake.url, '/upload/image', {});
    expect(anonymous.status).toBe(401);
    const json = await post(fake.url, '/upload/image', {}, { token: fake.issueTokenPair().access_token });
    expect(json.status).toBe(400);
    expect(json.body).toMatchObject({
      timestamp: expect.stringMatching(TIMESTAMP),
      data: { code: 'BAD_REQUEST' },
    });
  });
});
