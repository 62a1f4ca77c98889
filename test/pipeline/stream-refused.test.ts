import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type OAClient, OAValidationError } from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const fixture = clientFixture();
const PNG = readFileSync(new URL('../fixtures/media/sample.png', import.meta.url));
const MP4 = readFileSync(new URL('../fixtures/media/sample.mp4', import.meta.url));

/**
 * The file's bytes, then a megabyte more, made as they are read: a stream that is still open, most
 * of it unread, when the call refuses it (a stream read to its end destroys itself).
 */
function open(file: Buffer): Readable {
  return Readable.from(
    (function* () {
      yield file;
      for (let i = 0; i < 16; i++) yield Buffer.alloc(64 * 1024);
    })(),
  );
}

const UPLOADS: [string, (c: OAClient, s: Readable, o: object) => Promise<unknown>, Buffer][] = [
  ['uploadImage', (c, s, o) => c.uploadImage(s, o), PNG],
  ['uploadVideo', (c, s, o) => c.uploadVideo(s, o), MP4],
];

const answer = tokensThen((_req, res) =>
  json(res, 201, { data: { src_file: 'a', url: 'u', ticket_id: 't' } }),
);

describe.each(UPLOADS)(
  'a Readable handed to %s is destroyed when the call refuses it',
  (_name, upload, file) => {
    it('for a bad option ({ timeoutMs: -1 })', async () => {
      const { client, server } = await fixture.setup(answer);
      const stream = open(file);
      const error = await rejectsWithin(upload(client, stream, { timeoutMs: -1 }), 5000);
      expect(error).toBeInstanceOf(OAValidationError);
      expect(stream.destroyed).toBe(true);
      expect(server.hits).toEqual([]);
    });

    it('on a closed client', async () => {
      const { client } = await fixture.setup(answer);
      await client.close();
      const stream = open(file);
      await rejectsWithin(upload(client, stream, {}), 5000);
      expect(stream.destroyed).toBe(true);
    });
  },
);
