/**
 * A small support bot (oa-messaging/bot): a menu, an order lookup that remembers the order in the
 * user's session, and a reply to a photo of a damaged item.
 *
 *   npx tsx examples/support-bot.ts            # chats with itself through the fake OA server, then exits
 *   npx tsx examples/support-bot.ts --listen   # stays up: set the printed URL as webhook_url
 *   npx oa mock-server --bot support-bot       # the fake OA server with this bot behind its web inbox
 *
 * With --listen, replies go through your OA account when OA_BASE_URL, OA_API_KEY and OA_API_SECRET are
 * set, else to the fake OA server. Environment: PORT (default 3000 with --listen).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { OAClient } from 'oa-messaging';
import { type Bot, createBot } from 'oa-messaging/bot';
import { createMockServer } from 'oa-messaging/testing';
import { createWebhookHandler } from 'oa-messaging/webhook';
import { connect } from './support/connect.js';

/** Stands in for your order database. */
const ORDERS: Record<string, string> = {
  '1001': 'shipped on Monday; it arrives tomorrow',
  '1002': 'being packed; it leaves the warehouse today',
  '1003': 'delivered on Friday',
};

const MENU =
  'Hi! Send "order <number>" to track an order, "status" for the last order you asked about, ' +
  'or a photo of a damaged item.';

/** The claim form's picture the bot sends back (a 1x1 PNG here; your own image in a real bot). */
const CLAIM_PNG = Uint8Array.from(
  atob('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='),
  (char) => char.charCodeAt(0),
);

/** What the bot remembers of each user between messages (kept as JSON). */
interface Session {
  lastOrder?: string;
}

/** The bot: `oa mock-server --bot` calls this default export with a client of the fake server. */
export default function supportBot(client: OAClient): Bot<Session> {
  const bot = createBot<Session>({ client });

  bot.hears(/^(hi|hello|menu|help)$/i, (ctx) => ctx.reply(MENU));

  bot.hears(/order\s*#?(\d+)/i, async (ctx) => {
    const id = ctx.match[1] ?? '';
    const status = ORDERS[id];
    if (!status) return ctx.reply(`I can't find order ${id}. Check the number on your receipt?`);
    ctx.session.lastOrder = id;
    await ctx.reply(`Order ${id} is ${status}.`, { desc: `Order ${id}` });
  });

  bot.hears(/^status$/i, (ctx) => {
    const id = ctx.session.lastOrder;
    return ctx.reply(id ? `Order ${id} is ${ORDERS[id]}.` : 'Which order? Send "order <number>".');
  });

  // The user's photo URL is signed and short-lived: never send it back or keep it. The bot replies
  // with an image of its own: the client uploads it at the first photo and reuses that upload's
  // answer for the same bytes at every other (the client option `reuseUploads`, on by default).
  bot.on('image', async (ctx) => {
    await ctx.reply("Sorry it arrived damaged! We've opened a claim with this photo; a refund follows.");
    await ctx.replyWithImage(
      { data: CLAIM_PNG, filename: 'claim.png' },
      { link: 'https://shop.example.com/claims' },
    );
  });

  // Texts no `hears` took, and anything else (a voice message, a sticker ...).
  bot.on('text', (ctx) => ctx.reply(`Sorry, I didn't get "${ctx.text}". ${MENU}`));
  bot.fallback((ctx) => (ctx.from ? ctx.reply(MENU) : undefined));

  bot.catch(async (error, ctx) => {
    console.error('the bot failed on an event:', error);
    if (ctx.from) await ctx.reply('Something went wrong on our side; please try again in a minute.');
  });
  return bot;
}

/** A webhook receiver running `bot` on `port`; resolves to its URL. */
async function receive(bot: Bot<Session>, port: number): Promise<{ url: string; close(): void }> {
  const handler = createWebhookHandler({ onEvent: bot.handle });
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oa/webhook`;
  return { url, close: () => server.close() };
}

/** The demo: a user chats with the bot through the fake OA server; each reply as the fake recorded it. */
async function chat(): Promise<void> {
  const mock = await createMockServer();
  const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  const receiver = await receive(supportBot(client), 0);
  mock.webhookUrl = receiver.url;
  try {
    const turns = [
      { says: 'hi' },
      { says: 'order 1001' },
      { says: 'status' },
      { says: { type: 'image' as const }, replies: 2, shown: '(a photo)' },
      { says: 'what?' },
    ];
    for (const turn of turns) {
      console.log(`user-1: ${turn.shown ?? turn.says}`);
      const replies = await mock.say('user-1', turn.says, { replies: turn.replies ?? 1 });
      for (const reply of replies) {
        const item = reply.items[0] ?? {};
        console.log(`   bot: ${reply.endpoint === 'sendText' ? item.msg : `[${reply.endpoint}]`}`);
      }
    }
  } finally {
    receiver.close();
    await client.close();
    await mock.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  if (process.argv.includes('--listen')) {
    const connection = await connect();
    const receiver = await receive(supportBot(connection.client), Number(process.env.PORT ?? 3000));
    if (connection.mock) connection.mock.webhookUrl = receiver.url;
    console.log(`Support bot listening: set ${receiver.url} as webhook_url. Ctrl+C stops it.`);
    if (connection.mock) console.log(`Chat with it in the fake's web inbox: ${connection.mock.url}/`);
  } else {
    await chat();
  }
}
