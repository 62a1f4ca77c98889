/**
 * Receive the messages users send to your OA account, print them, and answer each with a text.
 *
 *   npx tsx examples/webhook-receiver.ts                   # posts sample events to itself, then exits
 *   npx tsx examples/webhook-receiver.ts --listen          # stays up: set the printed URL as webhook_url
 *   npx tsx examples/webhook-receiver.ts --listen --reply  # ... and replies to each message
 *
 * Replies go through your OA account when OA_BASE_URL, OA_API_KEY and OA_API_SECRET are set, else to
 * the fake OA server. Environment: PORT (default: a free port for the demo, 3000 with --listen),
 * WEBHOOK_PATH (default: a random, unguessable path: the OA API does not sign its webhook requests,
 * so the path is a secret).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isOAError } from 'oa-messaging';
// Only the demo below uses the testing kit: it posts events the way the OA service would.
import { sendInboundMessage } from 'oa-messaging/testing';
import {
  createWebhookHandler,
  getMessageMedia,
  getMessageText,
  isMessageEvent,
  type WebhookEvent,
} from 'oa-messaging/webhook';
import { type Connection, connect } from './support/connect.js';
import { formatBytes } from './support/progress.js';

const listenMode = process.argv.includes('--listen');
const replying = !listenMode || process.argv.includes('--reply');
const port = Number(process.env.PORT ?? (listenMode ? 3000 : 0));
const path = process.env.WEBHOOK_PATH ?? `/oa/webhook/${randomBytes(12).toString('hex')}`;

const connection: Connection | undefined = replying ? await connect() : undefined;

/** Where a media file is, without the signed part of its URL (which grants access to it). */
function shortUrl(url: string | undefined): string {
  return url === undefined ? 'no URL (sent by an old Tencent SDK)' : `${new URL(url).origin}/… (signed)`;
}

let handled = 0;
let failedReplies = 0;

async function onEvent(event: WebhookEvent): Promise<void> {
  handled++;
  // Every JSON object arrives here; what did not match its schema is listed (paths, never values).
  if (event.issues.length > 0)
    console.warn(`  (${event.issues.length} field(s) did not match)`, event.issues);
  // The spec says other event types may come: take note and answer 200 rather than fail.
  if (!isMessageEvent(event)) return void console.log(`${event.event_type} event (not a message)`);
  const { data } = event;
  console.log(`${event.event_type} from ${data.From_Account} to ${event.username}`);
  const text = getMessageText(event);
  if (text) console.log(`  text:  ${text}`);
  // Media URLs are signed and short-lived: fetch the file now if you need it; never store the URL.
  const media = getMessageMedia(event);
  for (const item of media) {
    const size = item.size === undefined ? 'size unknown' : formatBytes(item.size);
    console.log(`  media: ${item.kind}, ${size} at ${shortUrl(item.url)}`);
  }

  // A group message has no single sender to answer privately here.
  if (!connection || data.From_Account === undefined || data.GroupId !== undefined) return;
  // A reply is one quick call; slower work belongs in a queue, as the OA waits for this answer.
  const kind = media[0]?.kind === 'audio' ? 'voice message' : (media[0]?.kind ?? 'message');
  try {
    await connection.client.sendText({ user_id: data.From_Account, msg: `Thanks, we got your ${kind}.` });
    console.log(`  reply: sent to ${data.From_Account}`);
  } catch (error) {
    // The message itself was received: log the failed reply rather than ask for a redelivery.
    failedReplies++;
    console.error(`  reply failed: ${isOAError(error) ? error.message : String(error)}`);
  }
}

const handler = createWebhookHandler({
  onEvent,
  dedupe: true, // a redelivered message (same MsgKey) is answered 200 without calling onEvent again
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

async function stop(): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await connection?.close();
  if (listenMode) console.log('Stopped.');
}

if (listenMode) {
  console.log(`Waiting for events${replying ? ', replying to each' : ''} (Ctrl+C to stop).`);
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
} else {
  try {
    await postSamples(url, connection?.userId ?? 'user-1');
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  } finally {
    await stop();
  }
}

/** Posts a text, an image, a video, a voice message and a redelivery, as the OA service would. */
async function postSamples(target: string, from: string): Promise<void> {
  const posted = [
    await sendInboundMessage(target, 'Hello! Is the blue jacket still in stock?', { from }),
    await sendInboundMessage(target, { type: 'image', width: 2448, height: 3264, size: 1_853_095 }, { from }),
    await sendInboundMessage(target, { type: 'video', seconds: 5, size: 1_194_603 }, { from }),
    await sendInboundMessage(target, { type: 'sound', seconds: 4, size: 62_351 }, { from }),
  ];
  // The last event again, byte for byte: a redelivery, which `dedupe` answers without a second onEvent.
  posted.push(await sendInboundMessage(target, { type: 'raw', body: posted.at(-1)?.event }));
  const statuses = [...new Set(posted.map((p) => p.status))].join(', ');
  console.log(`Posted 4 messages and 1 redelivery, all answered ${statuses}; onEvent ran ${handled} times.`);
  if (posted.some((p) => p.status !== 200)) throw new Error('the receiver refused an event');
  if (handled !== 4) throw new Error('the redelivery was handled twice');
  if (failedReplies > 0) throw new Error(`${failedReplies} replies failed`);
  const mock = connection?.mock;
  if (mock) console.log(`The fake OA server received ${mock.deliveries.length} replies.`);
}
