import { createReadStream, writeFileSync } from 'node:fs';
import { truncate } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { OAError, OAValidationError } from '../../src/errors.js';
import { streamingMultipart } from '../../src/uploads/node-multipart.js';
import { prepareUpload } from '../../src/uploads/prepare.js';
import type { UploadProgress } from '../../src/uploads/types.js';
import { readForm, sha256 } from '../helpers/multipart.js';
import { MB, media, refusal, sendBody, sparseFile, tempDir, zeroStream } from './support.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const png = media('sample.png');
const mp4 = media('sample.mp4');
const mp3 = media('sample.mp3');

describe('refusals: nothing is sent, the message says what was found and what is allowed', () => {
  it('a GIF for uploadImage', async () => {
    const error = await refusal(prepareUpload('image', media('sample.gif').path));
    const message = 'sample.gif is a GIF image (image/gif); allowed: JPG, JPEG, PNG, WEBP';
    expect(error.message).toBe(`uploadImage: ${message}`);
    expect(error.issues).toEqual([{ path: ['file'], message }]);
  });

  it('text in a .png', async () => {
    const error = await refusal(prepareUpload('image', media('not-an-image.png').path));
    expect(error.message).toBe(
      'uploadImage: not-an-image.png is not a recognised image: its bytes match no known format ' +
        '(it looks like text); allowed: JPG, JPEG, PNG, WEBP',
    );
    expect(error.issues[0]?.path).toEqual(['file']);
  });

  it('a format of the other kind: audio to uploadVideo, video to uploadAudio, an image to both', async () => {
    expect((await refusal(prepareUpload('video', mp3.path))).message).toBe(
      'uploadVideo: sample.mp3 is an MP3 audio file (audio/mpeg); allowed: MP4, AVI, MKV, MOV, WEBM, OGG, 3GP, 3G2',
    );
    expect((await refusal(prepareUpload('audio', media('sample.webm').path))).message).toBe(
      'uploadAudio: sample.webm is a WEBM video (video/webm); allowed: MP3, WAV, OGG, M4A, AAC',
    );
    expect((await refusal(prepareUpload('video', png.bytes))).message).toMatch(
      /^uploadVideo: the Buffer is a PNG image \(image\/png\); allowed: MP4/,
    );
  });

  it('an empty file, Buffer or stream', async () => {
    const empty = tmp.file('empty.jpg');
    writeFileSync(empty, '');
    expect((await refusal(prepareUpload('image', empty))).message).toBe(
      'uploadImage: empty.jpg is empty (0 bytes)',
    );
    expect((await refusal(prepareUpload('audio', Buffer.alloc(0)))).message).toMatch(/the Buffer is empty/);
    expect((await refusal(prepareUpload('video', Readable.from([])))).message).toMatch(/the stream is empty/);
  });

  it('a missing path, a directory, an empty path: an OAValidationError, never a raw ENOENT', async () => {
    const missing = tmp.file('nope.mp4');
    const error = await refusal(prepareUpload('video', missing));
    expect(error.message).toBe(`uploadVideo: nope.mp4 was not found (no file at ${missing})`);
    expect(error.issues[0]?.path).toEqual(['file']);
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ENOENT');
    expect((await refusal(prepareUpload('video', pathToFileURL(missing)))).message).toMatch(
      /nope.mp4 was not found/,
    );
    expect((await refusal(prepareUpload('video', createReadStream(missing)))).message).toMatch(/not found/);
    expect((await refusal(prepareUpload('video', tmp.dir))).message).toMatch(/is not a file \(a directory\)/);
    expect((await refusal(prepareUpload('video', ''))).message).toMatch(/empty path/);
  });

  it('input the SDK cannot read', async () => {
    const wrong = [42, null, { path: 'x.png' }, ['a'], { data: 42 }];
    for (const value of wrong) {
      await refusal(prepareUpload('image', value as never));
    }
    expect((await refusal(prepareUpload('image', 42 as never))).message).toBe(
      'uploadImage: file must be a path, a file: URL, a Buffer, Uint8Array or ArrayBuffer, a Blob or File, ' +
        'a stream (web ReadableStream or Node Readable), or { data, filename?, contentType? }; got number',
    );
    expect((await refusal(prepareUpload('image', new URL('https://example.com/a.png')))).message).toMatch(
      /only file: URLs can be uploaded; got a https: URL/,
    );
    const badName = await refusal(prepareUpload('image', png.bytes, { filename: '' }));
    expect(badName.issues[0]?.path).toEqual(['filename']);
    // A name that is only a directory leaves nothing to send, given either way.
    const onlyDir = await refusal(prepareUpload('image', { data: png.bytes, filename: '/' }));
    expect(onlyDir.issues[0]?.path).toEqual(['file', 'filename']);
    expect((await refusal(prepareUpload('image', png.bytes, { filename: 'dir/ ' }))).issues[0]?.path).toEqual(
      ['filename'],
    );
  });
});

describe('size limits (1 MB = 1,048,576 bytes), checked before sending when the size is known', () => {
  it.each([
    ['image', 'big.png', png.bytes, 6 * MB, 'uploadImage: big.png is 6.0 MB; the limit is 5 MB'],
    ['video', 'big.mp4', mp4.bytes, 110_000_000, 'uploadVideo: big.mp4 is 104.9 MB; the limit is 100 MB'],
    ['audio', 'big.mp3', mp3.bytes, 101 * MB, 'uploadAudio: big.mp3 is 101.0 MB; the limit is 100 MB'],
  ] as const)('%s: a sparse file over the limit', async (kind, name, head, size, message) => {
    const path = await sparseFile(tmp.file(name), head, size);
    expect((await refusal(prepareUpload(kind, path))).message).toBe(message);
  });

  it('the limit itself passes; one byte more is refused with exact counts', async () => {
    const at = await sparseFile(tmp.file('at.png'), png.bytes, 5 * MB);
    expect((await prepareUpload('image', at)).size).toBe(5 * MB);
    const over = await sparseFile(tmp.file('over.png'), png.bytes, 5 * MB + 1);
    expect((await refusal(prepareUpload('image', over))).message).toBe(
      'uploadImage: over.png is 5,242,881 bytes; the limit is 5 MB (5,242,880 bytes)',
    );
  });

  it('an fs.ReadStream is measured from its file, before anything is read', async () => {
    const path = await sparseFile(tmp.file('stream.mp4'), mp4.bytes, 101 * MB);
    const stream = createReadStream(path);
    expect((await refusal(prepareUpload('video', stream))).message).toBe(
      'uploadVideo: stream.mp4 is 101.0 MB; the limit is 100 MB',
    );
    expect(stream.destroyed).toBe(true);
  });

  it.each([
    ['image', png.bytes, 5 * MB, /^uploadImage: image\.png is larger than 5 MB, the limit/],
    ['video', mp4.bytes, 100 * MB, /^uploadVideo: video\.mp4 is larger than 100 MB, the limit/],
  ] as const)(
    '%s: a stream of unknown length fails its body once it passes the limit',
    async (kind, head, limit, message) => {
      const upload = await prepareUpload(kind, zeroStream(head, limit + 1));
      expect(upload.size).toBeUndefined();
      const progress: UploadProgress[] = [];
      const { body, headers } = await streamingMultipart(upload, (p) => progress.push(p));
      expect(headers['content-length']).toBeUndefined();
      const error = await readForm(body).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(OAValidationError);
      expect((error as OAValidationError).message).toMatch(message);
      expect((error as OAValidationError).issues[0]?.path).toEqual(['file']);
      expect(progress.at(-1)?.loaded).toBeLessThanOrEqual(limit);
    },
  );

  it('a stream of unknown length at the limit goes out whole', async () => {
    const upload = await prepareUpload('image', zeroStream(png.bytes, 5 * MB));
    const { part, progress } = await sendBody(upload);
    expect(part.size).toBe(5 * MB);
    expect(progress.at(-1)).toEqual({ loaded: 5 * MB, total: undefined });
  });

  it('a refused stream is destroyed, so its file is not left open', async () => {
    const stream = createReadStream(media('sample.gif').path);
    await refusal(prepareUpload('image', stream));
    expect(stream.destroyed).toBe(true);
  });
});

describe('formats: the bytes decide; the name or declared type only settles what they leave open', () => {
  it('an MP4 container with a generic brand is M4A for uploadAudio only when named or declared so', async () => {
    // The M4A fixture with its major brand rewritten from `M4A ` to `isom`: the bytes no longer say audio.
    const generic = Buffer.from(media('sample.m4a').bytes);
    generic.write('isom', 8, 'latin1');
    const refused = await refusal(prepareUpload('audio', generic));
    expect(refused.message).toMatch(
      /the Buffer is an MP4 video \(video\/mp4\); allowed: MP3, WAV, OGG, M4A, AAC \(an MP4/,
    );
    expect((await prepareUpload('audio', generic, { filename: 'voice.m4a' })).contentType).toBe('audio/mp4');
    expect((await prepareUpload('audio', generic, { contentType: 'audio/mp4' })).contentType).toBe(
      'audio/mp4',
    );
    expect((await prepareUpload('video', generic)).contentType).toBe('video/mp4');
  });

  it('a name that disagrees with the bytes is kept; the Content-Type follows the bytes', async () => {
    const upload = await prepareUpload('image', png.bytes, {
      filename: 'photo.jpg',
      contentType: 'image/jpeg',
    });
    expect(upload).toMatchObject({ filename: 'photo.jpg', contentType: 'image/png' });
  });

  it('an OGG file is fine as video and as audio, with the type of the endpoint', async () => {
    for (const name of ['sample.ogg', 'sample.ogv']) {
      expect((await prepareUpload('video', media(name).path)).contentType).toBe('video/ogg');
      expect((await prepareUpload('audio', media(name).path)).contentType).toBe('audio/ogg');
    }
  });

  it('an AAC file behind a large ID3 tag is seen through the tag in a stream too', async () => {
    // Sniffing only the first 4 KB would stop inside the tag and guess MP3, the usual owner of ID3 tags.
    const size = 200_000;
    const tag = Buffer.alloc(10 + size);
    tag.write('ID3', 0, 'latin1');
    tag[3] = 4;
    [tag[6], tag[7], tag[8], tag[9]] = [
      (size >> 21) & 0x7f,
      (size >> 14) & 0x7f,
      (size >> 7) & 0x7f,
      size & 0x7f,
    ];
    const aac = media('sample.aac').bytes;
    const whole = Buffer.concat([tag, aac, aac, aac]);
    const chunks = Array.from({ length: Math.ceil(whole.length / 16_384) }, (_, i) =>
      whole.subarray(i * 16_384, (i + 1) * 16_384),
    );
    const upload = await prepareUpload('audio', Readable.from(chunks));
    expect(upload.contentType).toBe('audio/aac');
    const { part } = await sendBody(upload);
    expect(part.sha256).toBe(sha256(whole));
  });
});

describe('bodies and attempts', () => {
  it('a second body of a one-shot stream throws an OAError that says why', async () => {
    const upload = await prepareUpload('image', Readable.from([png.bytes]));
    expect(upload.replayable).toBe(false);
    await sendBody(upload);
    await expect(streamingMultipart(upload)).rejects.toThrowError(OAError);
    await expect(streamingMultipart(upload)).rejects.toThrowError(
      /came from a stream, which an earlier attempt already read/,
    );
  });

  it('a file that changed size after the check fails its body instead of sending a wrong length', async () => {
    const path = tmp.file('shrinks.mp4');
    writeFileSync(path, Buffer.concat([mp4.bytes, Buffer.alloc(100_000)]));
    const upload = await prepareUpload('video', path);
    await truncate(path, mp4.bytes.length);
    const error = await readForm((await streamingMultipart(upload)).body).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(OAError);
    expect((error as OAError).message).toMatch(/^uploadVideo: shrinks.mp4 changed while it was being sent/);
  });

  it('an exception thrown by onProgress fails the attempt', async () => {
    const upload = await prepareUpload('image', png.path);
    const boom = new Error('progress handler failed');
    const { body } = await streamingMultipart(upload, () => {
      throw boom;
    });
    await expect(readForm(body)).rejects.toBe(boom);
  });
});
