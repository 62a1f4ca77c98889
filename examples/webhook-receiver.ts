/**
 * Receive the messages clients send to your OA account and print them.
 *
 *   npx tsx examples/webhook-receiver.ts            # demo: posts a few sample events to itself, then exits
 *   npx tsx examples/webhook-receiver.ts --listen   # stays up; set the printed URL as the OA webhook_url
 *
 * Environment: PORT (default: a free port for the demo, 3000 with --listen), WEBHOOK_PATH (default: a
 * random, unguessable path: the OA API does not sign its webhook requests, so the path is a secret).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createWebhookHandler,
  getMessageMedia,
  getMessageText,
  type WebhookEvent,
  type WebhookMedia,
} from '../src/webhook/index.js';

const listenMode = process.argv.includes('--listen');
const port = Number(process.env.PORT ?? (listenMode ? 3000 : 0));
const path = process.env.WEBHOOK_PATH ?? `/oa/webhook/${randomBytes(12).toString('hex')}`;

const kb = (bytes: number | undefined) => (bytes === undefined ? '?' : `${(bytes / 1024).toFixed(1)} KB`);

function describeMedia(media: WebhookMedia): string {
  const where = media.url ?? '(no URL: sent by an old Tencent SDK)';
  switch (media.kind) {
    case 'image':
      return `image, ${media.variant} ${media.width ?? '?'}x${media.height ?? '?'} ${media.format ?? ''}, ${kb(media.size)}: ${where}`;
    case 'video':
      return `video, ${media.durationSeconds ?? '?'} s ${media.format ?? ''}, ${kb(media.size)}: ${where}`;
    case 'audio':
      return `voice, ${media.durationSeconds ?? '?'} s, ${kb(media.size)}: ${where}`;
    case 'file':
      return `file ${media.fileName ?? ''}, ${kb(media.size)}: ${where}`;
  }
}

function printEvent(event: WebhookEvent): void {
  const { data } = event;
  const sentAt = data.MsgTime === undefined ? event.timestamp : new Date(data.MsgTime * 1000).toISOString();
  console.log(`\n[${sentAt}] ${event.event_type} from ${data.From_Account} to OA account ${event.username}`);
  const text = getMessageText(event);
  if (text) console.log(`  text:  ${text}`);
  // Signed URLs: fetch them now if you need the file; do not store them.
  for (const media of getMessageMedia(event)) console.log(`  media: ${describeMedia(media)}`);
}

const handler = createWebhookHandler({
  onEvent: printEvent,
  dedupe: true,
  logger: { warn: console.warn, error: console.error },
});
// Only the secret path reaches the receiver; anything else is a 404.
const server = createServer((req, res) => {
  if (new URL(req.url ?? '/', 'http://localhost').pathname === path) return void handler(req, res);
  res.writeHead(404).end();
});
await new Promise<void>((resolve) => server.listen(port, resolve));
const url = `http://localhost:${(server.address() as AddressInfo).port}${path}`;

console.log(`Receiving OA webhook events at ${url}`);

if (listenMode) {
  console.log('Waiting for events (Ctrl+C to stop).');
} else {
  await runDemo(url);
  server.close();
}

/** Events shaped like the ones the OA service forwards (values from Tencent's documentation). */
function sampleEvents(): unknown[] {
  const cos = 'https://1234-5678187359-1253735226.cos.ap-shanghai.myqcloud.com/abc123';
  const signed = '?sign=q-sign-algorithm%3Dsha1%26q-ak%3DAKID%26q-key-time%3D1700000000%3B1700003600';
  const event = (seq: number, elements: unknown[]) => ({
    event_type: 'message',
    username: 'demo_shop',
    timestamp: new Date().toISOString(),
    data: {
      CallbackCommand: 'C2C.CallbackAfterSendMsg',
      From_Account: 'customer_1001',
      To_Account: 'demo_shop',
      MsgSeq: seq,
      MsgRandom: 2837546,
      MsgTime: Math.floor(Date.now() / 1000),
      MsgKey: `${seq}_2837546_${Math.floor(Date.now() / 1000)}`,
      SendMsgResult: 0,
      EventTime: String(Date.now()), // Tencent sometimes sends it as a string
      MsgBody: elements,
    },
  });
  return [
    event(1, [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'Hello! Is the blue jacket still in stock?' } }]),
    event(2, [
      { MsgType: 'TIMTextElem', MsgContent: { Text: 'This one, size M:' } },
      {
        MsgType: 'TIMImageElem',
        MsgContent: {
          UUID: '1853095_D61040894AC3DE44CDFFFB3EC7EB720F',
          ImageFormat: 1,
          ImageInfoArray: [
            { Type: 1, Size: 1853095, Width: 2448, Height: 3264, URL: `${cos}/img/0${signed}` },
            { Type: 2, Size: 256524, Width: 0, Height: 0, URL: `${cos}/img/720${signed}` },
            { Type: 3, Size: 12535, Width: 0, Height: 0, URL: `${cos}/img/198${signed}` },
          ],
        },
      },
    ]),
    event(3, [
      {
        MsgType: 'TIMVideoFileElem',
        MsgContent: {
          VideoUrl: `${cos}/video/f7c6ad3c50af7d83e23efe0a208b90c9${signed}`,
          VideoUUID: '5da38ba89d6521011e1f6f3fd6692e35',
          VideoSize: 1194603,
          VideoSecond: 5,
          VideoFormat: 'mp4',
          ThumbUrl: `${cos}/video/a6c170c9c599280cb06e0523d7a1f37b${signed}`,
          ThumbSize: 13907,
          ThumbWidth: 720,
          ThumbHeight: 1280,
          ThumbFormat: 'JPG',
        },
      },
    ]),
    event(4, [
      {
        MsgType: 'TIMSoundElem',
        MsgContent: { Url: `${cos}/sound/c9be9d32${signed}`, UUID: '1053D4B3D610', Size: 62351, Second: 4 },
      },
    ]),
  ];
}

async function runDemo(target: string): Promise<void> {
  const events = sampleEvents();
  // The last one again: a redelivery, which `dedupe` answers 200 without printing it twice.
  for (const [index, body] of [...events, events.at(-1)].entries()) {
    const response = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = await response.text();
    console.log(`  -> POST #${index + 1} answered ${response.status} ${answer}`);
    if (!response.ok) throw new Error(`the receiver answered ${response.status}`);
  }
  console.log('\nDemo done: 4 events received, 1 redelivery skipped.');
}
