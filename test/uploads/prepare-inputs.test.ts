import { createReadStream, openAsBlob, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, slices } from '../../src/uploads/chunks.js';
import { streamingMultipart } from '../../src/uploads/node-multipart.js';
import { prepareUpload } from '../../src/uploads/prepare.js';
import type { FileInput } from '../../src/uploads/types.js';
import { sha256 } from '../helpers/multipart.js';
import { MB, media, sendBody, tempDir, zeroStream } from './support.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

const png = media('sample.png');
const mp4 = media('sample.mp4');

/** A Uint8Array that is a view into the middle of a larger buffer (not a Buffer). */
function view(bytes: Uint8Array): Uint8Array {
  const backing = new Uint8Array(bytes.length + 20);
  backing.set(bytes, 10);
  return backing.subarray(10, 10 + bytes.length);
}

const inChunks = (bytes: Uint8Array, size: number) =>
  Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

type Case = [name: string, make: () => FileInput | Promise<FileInput>, filename: string, replayable: boolean];

const imageCases: Case[] = [
  ['an absolute path', () => png.path, 'sample.png', true],
  ['a relative path', () => relative(process.cwd(), png.path), 'sample.png', true],
  ['a file: URL string', () => pathToFileURL(png.path).href, 'sample.png', true],
  ['a URL object', () => pathToFileURL(png.path), 'sample.png', true],
  ['a Buffer', () => png.bytes, 'image.png', true],
  ['a Uint8Array view', () => view(png.bytes), 'image.png', true],
  ['a Blob', () => new Blob([png.bytes], { type: 'image/png' }), 'image.png', true],
  ['a File', () => new File([png.bytes], 'holiday.png', { type: 'image/png' }), 'holiday.png', true],
  ['a Blob from fs.openAsBlob', () => openAsBlob(png.path), 'image.png', true],
  ['a Readable', () => Readable.from(inChunks(png.bytes, 100)), 'image.png', false],
  ['an fs.ReadStream', () => createReadStream(png.path), 'sample.png', false],
  ['{ data, filename }', () => ({ data: png.bytes, filename: 'logo.png' }), 'logo.png', true],
  ['{ data: path, filename }', () => ({ data: png.path, filename: 'renamed.png' }), 'renamed.png', true],
];

describe('every input kind goes out as the same part: field, filename, Content-Type and exact bytes', () => {
  it.each(imageCases)('uploadImage from %s', async (_name, make, filename, replayable) => {
    const upload = await prepareUpload('image', await make());
    expect(upload).toMatchObject({
      kind: 'image',
      field: 'file',
      filename,
      contentType: 'image/png',
      replayable,
    });
    expect(upload.size).toBe(png.bytes.length);
    const attempts = replayable ? 2 : 1;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const { part, headers, length, progress } = await sendBody(upload);
      expect(part).toEqual({
        field: 'file',
        filename,
        contentType: 'image/png',
        size: png.bytes.length,
        sha256: sha256(png.bytes),
      });
      expect(headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(headers['content-length']).toBe(String(length));
      expect(progress[0]).toEqual({ loaded: 0, total: png.bytes.length });
      expect(progress.at(-1)).toEqual({ loaded: png.bytes.length, total: png.bytes.length });
    }
  });

  it('a video from an fs.ReadStream: name and size from its path, so Content-Length is known', async () => {
    const upload = await prepareUpload('video', createReadStream(mp4.path));
    expect(upload).toMatchObject({ field: 'video', filename: 'sample.mp4', size: mp4.bytes.length });
    const { part, headers, length } = await sendBody(upload);
    expect(part).toMatchObject({ field: 'video', contentType: 'video/mp4', sha256: sha256(mp4.bytes) });
    expect(headers['content-length']).toBe(String(length));
  });

  it('a long stream of unknown length goes out chunked, with every byte in order', async () => {
    const total = 300_000;
    const stream = zeroStream(mp4.bytes, total);
    const upload = await prepareUpload('video', stream);
    expect(upload).toMatchObject({ filename: 'video.mp4', size: undefined, replayable: false });
    const { part, headers, progress } = await sendBody(upload);
    expect(headers['content-length']).toBeUndefined();
    expect(part.size).toBe(total);
    expect(part.sha256).toBe(sha256(Buffer.concat([mp4.bytes, Buffer.alloc(total - mp4.bytes.length)])));
    expect(progress.every((p) => p.total === undefined)).toBe(true);
  });

  it('the filename option wins over the input and the path', async () => {
    const upload = await prepareUpload(
      'image',
      { data: png.path, filename: 'a.png' },
      { filename: 'dir/b.png' },
    );
    expect(upload.filename).toBe('b.png');
    const { part } = await sendBody(upload);
    expect(part.filename).toBe('b.png');
  });

  it('a file name with quotes or line breaks cannot break the part header', async () => {
    const upload = await prepareUpload('image', png.bytes, { filename: 'a"b\r\nc.png' });
    const { part } = await sendBody(upload);
    expect(part.filename).toBe('a%22b%0D%0Ac.png');
    expect(part.sha256).toBe(sha256(png.bytes));
  });
});

describe('memory and resources', () => {
  it('a big Buffer goes out in slices of the same memory, so progress moves', async () => {
    const big = Buffer.alloc(3 * MB);
    png.bytes.copy(big);
    const pieces = [...slices(big)];
    expect(pieces.every((piece) => piece.buffer === big.buffer && piece.length <= CHUNK_BYTES)).toBe(true);
    const { part, progress } = await sendBody(await prepareUpload('image', big));
    expect(part.sha256).toBe(sha256(big));
    expect(progress.length).toBeGreaterThan(40);
    expect(progress.map((p) => p.loaded)).toEqual([...progress.map((p) => p.loaded)].sort((a, b) => a - b));
    expect(progress.at(-1)).toEqual({ loaded: big.length, total: big.length });
  });

  const fdsTo = (path: string) =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false;
      }
    }).length;

  it.runIf(process.platform === 'linux')(
    'a file is opened only when its body is read, and dispose() closes it',
    async () => {
      const path = tmp.file('dispose.mp4');
      writeFileSync(path, Buffer.concat([mp4.bytes, Buffer.alloc(2 * MB)]));
      const upload = await prepareUpload('video', path);
      const unread = await streamingMultipart(upload);
      expect(fdsTo(path)).toBe(0);
      unread.dispose();

      const attempt = await streamingMultipart(upload);
      let seen = 0;
      await new Promise<void>((resolve) => {
        attempt.body.on('data', (chunk: Buffer | string) => {
          seen += chunk.length;
          if (seen > 100_000) {
            attempt.body.pause();
            resolve();
          }
        });
        attempt.body.resume();
      });
      expect(fdsTo(path)).toBe(1);
      attempt.dispose();
      await sleep(50);
      expect(fdsTo(path)).toBe(0);
    },
  );

  it("dispose() destroys a caller's stream that an attempt left half read", async () => {
    const stream = zeroStream(mp4.bytes, 5 * MB);
    const attempt = await streamingMultipart(await prepareUpload('video', stream));
    attempt.body.once('data', () => attempt.dispose());
    attempt.body.resume();
    await sleep(50);
    expect(stream.destroyed).toBe(true);
  });
});
