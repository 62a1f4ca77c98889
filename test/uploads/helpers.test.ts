import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  OATranscodeTimeoutError,
  OAValidationError,
  type UploadImageResult,
  type UploadVideoResult,
} from '../../src/index.js';
import { mockServerFixture } from '../testing/support.js';

const { start, connect } = mockServerFixture();
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/media/${name}`, import.meta.url));

describe('the one-call helpers', () => {
  it('sendImageFile: uploads, tells onUploaded before the send, sends the stored url with its link', async () => {
    const mock = await start();
    const client = connect(mock);
    const told: { upload: UploadImageResult; deliveriesThen: number }[] = [];
    const result = await client.sendImageFile('user-1', fixture('sample.png'), {
      link: 'https://shop.example.com',
      onUploaded: (upload) => told.push({ upload, deliveriesThen: mock.deliveries.length }),
    });
    expect(result).toBe('success');
    expect(told).toEqual([{ upload: mock.uploads[0]?.result, deliveriesThen: 0 }]);
    expect(mock.deliveries).toMatchObject([
      {
        endpoint: 'sendImage',
        user_ids: ['user-1'],
        items: [{ msg: told[0]?.upload.url, link: 'https://shop.example.com' }],
      },
    ]);
  });

  it('sendAudioFile: sends the four values of the upload', async () => {
    const mock = await start();
    const client = connect(mock);
    const told: unknown[] = [];
    expect(
      await client.sendAudioFile('user-1', fixture('sample.m4a'), { onUploaded: (u) => told.push(u) }),
    ).toBe('success');
    expect(told).toEqual([mock.uploads[0]?.result]);
    expect(mock.deliveries).toMatchObject([{ endpoint: 'sendAudio', user_ids: ['user-1'] }]);
  });

  it('a failed send after the upload: onUploaded has the ticket to send again without uploading', async () => {
    const mock = await start({ transcodeMs: 60_000 });
    const client = connect(mock);
    let uploaded: UploadVideoResult | undefined;
    const sending = client.sendVideoFile('user-1', fixture('sample.mp4'), {
      waitForTranscode: { timeoutMs: 300 },
      onUploaded: (upload) => {
        uploaded = upload;
      },
    });
    await expect(sending).rejects.toBeInstanceOf(OATranscodeTimeoutError);
    expect(uploaded).toEqual(mock.uploads[0]?.result);
    expect(uploaded?.ticket_id).toEqual(expect.any(String));
    expect(mock.deliveries).toEqual([]);
  });

  it('refuses a wrong argument of any helper before the upload: nothing is stored or sent', async () => {
    const mock = await start();
    const client = connect(mock);
    const image = fixture('sample.png');
    const video = fixture('sample.mp4');
    const calls = [
      client.sendImageFile('user-1', image, { link: 'not a url' }),
      client.sendImageFile(' ', image),
      client.sendAudioFile('user-1', fixture('sample.m4a'), { onUploaded: 'yes' as never }),
      client.sendVideoFile('user-1', video, { waitForTranscode: { timeoutMs: -1 } }),
      client.sendVideoFile('', video),
    ];
    const errors = await Promise.all(
      calls.map((call) =>
        call.then(
          () => undefined,
          (error) => error,
        ),
      ),
    );
    for (const error of errors) expect(error).toBeInstanceOf(OAValidationError);
    expect(errors.map((error) => (error as OAValidationError).issues[0]?.path)).toEqual([
      ['link'],
      ['user_id'],
      ['onUploaded'],
      ['waitForTranscode', 'timeoutMs'],
      ['user_id'],
    ]);
    expect(errors[3]?.message).toMatch(/^Invalid sendVideoFile options: waitForTranscode/);
    expect(mock.requests).toEqual([]);
  });
});
