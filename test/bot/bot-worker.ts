// Run as a child process by the bot's multi-process tests: one process of a bot. Its inbox worker runs
// `bot.handle` with `order: 'sender'`, its replies go through a keyed outbox (whose worker, with
// `sendReplies`, sends them to the fake), and its sessions live in Redis. Each text handled is RPUSHed to `handled:<user>` before
// the reply; the reply is `got <text> #<session count>`. With `name`, each reply sent is RPUSHed to
// `sent:<user>` as `<name>:<text>`, a text equal to `slowText` waits `slowMs` before its reply (after
// which a user whose id starts with `quiet` gets none: that handler only changes the session), and the
// bot's warnings are printed. Prints `ready`;
// runs until it is killed.
import { createBot } from '../../src/bot/index.js';
import { OAClient } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import { createRedisSessionStore } from '../../src/redis/index.js';
import { redisClient } from '../redis/redis-client.js';

/** What the test passes as the one argument (JSON). */
export interface BotWorkerConfig {
  redisUrl: string;
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  inbox: string;
  outbox: string;
  concurrency: number;
  /** Whether this process also runs an outbox worker (the replies' sends). */
  sendReplies: boolean;
  /** The inbox worker's lockDurationMs. @default 2000 */
  lockDurationMs?: number;
  /** This process's name in `sent:<user>`. */
  name?: string;
  slowText?: string;
  slowMs?: number;
}

const config = JSON.parse(process.argv[2] ?? '{}') as BotWorkerConfig;
const redis = redisClient(config.redisUrl);
const client = new OAClient({
  baseUrl: config.baseUrl,
  apiKey: config.apiKey,
  apiSecret: config.apiSecret,
  rateLimit: false,
});
const outbox = createOutbox({ connection: { url: config.redisUrl }, name: config.outbox });
const inbox = createInbox({ connection: { url: config.redisUrl }, name: config.inbox, order: 'sender' });
const sessions = createRedisSessionStore({ url: config.redisUrl });
const { name } = config;
const bot = createBot<{ count: number }>({
  client,
  outbox,
  sessions,
  initialSession: () => ({ count: 0 }),
  logger: { warn: (message) => process.stdout.write(`warn: ${message}\n`) },
});
bot.on('text', async (ctx) => {
  ctx.session.count++;
  await redis.rpush(`handled:${ctx.from}`, ctx.text);
  if (ctx.text === config.slowText) {
    await redis.rpush(`slow:${ctx.from}`, String(name));
    await new Promise((r) => setTimeout(r, config.slowMs ?? 0));
    if (ctx.from?.startsWith('quiet')) return;
  }
  await ctx.reply(`got ${ctx.text} #${ctx.session.count}`);
  if (name !== undefined) await redis.rpush(`sent:${ctx.from}`, `${name}:${ctx.text}`);
});
inbox.work(bot.handle, { concurrency: config.concurrency, lockDurationMs: config.lockDurationMs ?? 2000 });
if (config.sendReplies) outbox.work({ client, concurrency: 4, lockDurationMs: 2000 });
process.stdout.write('ready\n');
