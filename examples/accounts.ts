/**
 * Many OA accounts in one service, as a helpdesk or shop platform connects its customers' OAs: the
 * credentials in your database, one webhook receiver with a path per account, a bot that answers
 * through the account that received the message, and a campaign per account.
 *
 *   npx tsx examples/accounts.ts
 *
 * It starts the fake OA server with two accounts in this process (their usernames, keys and secrets
 * stand for the rows of your database).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccounts, items } from 'oa-messaging';
import { createBot } from 'oa-messaging/bot';
import { createMockServer, sendInboundMessage } from 'oa-messaging/testing';
import { createWebhookHandler } from 'oa-messaging/webhook';

const mock = await createMockServer({
  accounts: [
    { username: 'shop-a', apiKey: 'test-api-key-a', apiSecret: 'test-api-secret-a' },
    { username: 'shop-b', apiKey: 'test-api-key-b', apiSecret: 'test-api-secret-b' },
  ],
  members: { all: ['user-1', 'user-2'] },
});
console.log(`using the fake OA server at ${mock.url}, with the accounts shop-a and shop-b`);

// Your database of connected accounts: the account id (here the OA username, which every inbound
// event carries) to its api key and secret. Read when an account's client first needs them.
const database = new Map(
  mock.accounts.map((a) => [a.username, { apiKey: a.apiKey, apiSecret: a.apiSecret }]),
);
const accounts = createAccounts({
  credentials: async (account) => database.get(account), // undefined: no such account
  clientOptions: { baseUrl: mock.url },
  // In your code: a secret of your own (process.env.OA_WEBHOOK_SECRET), kept as an api secret is.
  webhookSecret: 'example-webhook-secret-not-for-production',
});

// One bot for every account: replies go through the account that received the message, and the
// session of user-1 at shop-a is not that of user-1 at shop-b.
const bot = createBot<{ messages?: number }>({ accounts });
bot.on('text', async (ctx) => {
  ctx.session.messages = (ctx.session.messages ?? 0) + 1;
  await ctx.reply(
    `${ctx.event.username} here: "${ctx.text}" is your message #${ctx.session.messages} to us.`,
  );
});

// One receiver for every account: each account's webhook URL is this route and its own path. The
// handler takes an event only on the path of its account (403 else) and a valid path only (404 else).
const handler = createWebhookHandler({ accounts, onEvent: bot.handle });
const server = createServer(handler);
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const receiver = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oa/webhook`;
const webhookUrl = async (account: string) => `${receiver}${await accounts.webhookPath(account)}`;

try {
  for (const account of ['shop-a', 'shop-b']) {
    // Give this URL to the OA as that account's webhook (the token is as secret as a password).
    const url = await webhookUrl(account);
    console.log(`${account}: webhook ${url.slice(0, url.lastIndexOf('/') + 7)}… (one path per account)`);
  }

  const chat = async (account: string, user: string, text: string) => {
    const [reply] = await mock.say(user, text, { account, webhookUrl: await webhookUrl(account) });
    console.log(`${user} -> ${account}: ${text}\n   ${account} -> ${user}: ${reply?.items[0]?.msg}`);
  };
  await chat('shop-a', 'user-1', 'hello');
  await chat('shop-a', 'user-1', 'where is my order?');
  await chat('shop-b', 'user-1', 'hello'); // another shop: another session

  // Someone who learned shop-a's URL posts an event claiming to be shop-b's: refused, nothing sent.
  const forged = await sendInboundMessage(await webhookUrl('shop-a'), 'pay me', { username: 'shop-b' });
  console.log(`an event for shop-b posted to shop-a's URL: ${forged.status} (refused)`);

  // A campaign per account, each through its own client (its own token and quota).
  for (const account of ['shop-a', 'shop-b']) {
    const record = await accounts
      .client(account)
      .broadcast({ target: 'all', items: [items.text(`This week at ${account}: 20% off.`)] });
    console.log(`${account}: campaign to all users, record ${record.id.slice(0, 8)}`);
  }

  for (const account of mock.accounts) {
    const logins = account.requests.filter((r) => r.path.endsWith('/auth/token')).length;
    console.log(
      `The fake's ${account.username} received ${account.deliveries.length} messages and ${logins} login`,
    );
  }
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await handler.close();
  server.close();
  await accounts.close();
  await mock.close();
}
