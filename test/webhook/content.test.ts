import { describe, expect, it } from 'vitest';
import { getMessageMedia, getMessageText } from '../../src/webhook/index.js';
import { CALLBACK_BASE, envelope, eventWith, loadFixture, parseMessage } from './support.js';

const withFixtures = (...names: string[]) => parseMessage(eventWith(names.map(loadFixture)));

describe('getMessageText', () => {
  it('joins the text elements in order and skips the rest', () => {
    const event = parseMessage(
      envelope({ ...CALLBACK_BASE, ...loadFixture('tencent-doc-MsgBody-text-face-text-1.json') }),
    );
    expect(getMessageText(event)).toBe('helloworld');
  });

  it('reads a callback as well as an event', () => {
    const event = withFixtures('tencent-doc-TIMTextElem-1.json');
    expect(getMessageText(event.data)).toBe('hello world');
  });

  it("is '' for a message without text", () => {
    expect(getMessageText(withFixtures('tencent-doc-TIMImageElem-1.json'))).toBe('');
  });
});

describe('getMessageMedia', () => {
  const image = withFixtures('tencent-doc-TIMImageElem-1.json');

  it('returns the original image by default', () => {
    const [media] = getMessageMedia(image);
    expect(media).toMatchObject({
      kind: 'image',
      variant: 'original',
      width: 2448,
      height: 3264,
      format: 'jpg',
    });
    expect(media?.url).toMatch(/\/0$/);
    expect(media?.size).toBe(1853095);
  });

  it.each([
    ['large', /\/720$/],
    ['thumbnail', /\/198$/],
  ] as const)('returns the %s image when asked', (imageVariant, url) => {
    const [media] = getMessageMedia(image, { imageVariant });
    expect(media?.kind === 'image' && media.variant).toBe(imageVariant);
    expect(media?.url).toMatch(url);
    // Tencent says 0 for sizes it does not know.
    expect(media?.kind === 'image' && media.width).toBeUndefined();
  });

  it('falls back to the nearest variant when the wanted one is missing', () => {
    const onlyThumb = parseMessage(
      eventWith([
        {
          MsgType: 'TIMImageElem',
          MsgContent: { ImageInfoArray: [{ Type: 3, Size: 10, Width: 0, Height: 0, URL: 'https://x/198' }] },
        },
      ]),
    );
    expect(getMessageMedia(onlyThumb)[0]).toMatchObject({ variant: 'thumbnail', url: 'https://x/198' });
  });

  it('describes sound, video and file, and keeps legacy elements without urls', () => {
    const event = withFixtures(
      'tencent-doc-TIMSoundElem-1.json',
      'tencent-doc-TIMVideoFileElem-1.json',
      'tencent-doc-TIMFileElem-1.json',
      'tencent-doc-TIMTextElem-1.json',
      'tencent-doc-TIMSoundElem-2-legacy-sdk2x3x.json',
      'tencent-doc-TIMVideoFileElem-2-legacy-sdk2x3x.json',
    );
    const media = getMessageMedia(event);
    expect(media.map((item) => [item.kind, item.elementIndex])).toEqual([
      ['audio', 0],
      ['video', 1],
      ['file', 2],
      ['audio', 4],
      ['video', 5],
    ]);
    expect(media[0]).toMatchObject({ size: 62351, durationSeconds: 1 });
    expect(media[0]?.url).toMatch(/myqcloud\.com/);
    expect(media[1]).toMatchObject({
      durationSeconds: 5,
      format: 'mp4',
      thumbnail: { width: 720, height: 1280 },
    });
    expect(media[2]).toMatchObject({ size: 1773552, fileName: expect.stringMatching(/\.MOV$/) });
    expect(media[3]).toMatchObject({ kind: 'audio', url: undefined, uuid: '305c0201' });
    expect(media[4]).toMatchObject({
      kind: 'video',
      url: undefined,
      thumbnail: { url: undefined, size: 13907 },
    });
  });

  it('is empty for text, location, face and custom elements', () => {
    const event = withFixtures(
      'tencent-doc-TIMTextElem-1.json',
      'tencent-doc-TIMLocationElem-1.json',
      'tencent-doc-TIMFaceElem-1.json',
      'tencent-doc-TIMCustomElem-1.json',
    );
    expect(getMessageMedia(event)).toEqual([]);
  });
});
