/** `oa mock-server --bot`: a bot module run behind the fake's webhook, so the web inbox chats with it. */
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createAccounts } from '../accounts/accounts.js';
import type { Bot } from '../bot/index.js';
import { OAConfigError } from '../errors.js';
import type { MockServer } from '../testing/index.js';
import { createWebhookHandler } from '../webhook/index.js';
import { examplesFolder } from './commands/example.js';
import { UsageError } from './errors.js';

/** A running bot: where it receives, and how to stop it. */
export interface RunningBot {
  url: string;
  close(): Promise<void>;
}

/** Where `--bot NAME` is: an example of the package (`support-bot`), else a path from the current folder. */
function modulePath(name: string): string {
  const example = join(examplesFolder(), `${name}.mjs`);
  if (/^[\w-]+$/.test(name) && existsSync(example)) return example;
  const path = resolve(name);
  if (!existsSync(path)) throw new UsageError(`--bot ${name}: no such file (or example: try support-bot)`);
  return path;
}

/** How many frames of a stack are printed: where it was thrown, and what called that. */
const FRAMES = 5;

/**
 * A handler's error as lines to print: its name and message, the first {@link FRAMES} frames of its
 * stack (where it was thrown), and the same for each `cause`.
 */
function errorLines(error: unknown, depth = 0): string[] {
  if (!(error instanceof Error)) return [`thrown: ${String(error)}`];
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, FRAMES)
    .map((line) => `  ${line.trim()}`);
  const lines = [`${depth === 0 ? '' : 'caused by: '}${error.name}: ${error.message}`, ...frames];
  return depth < 3 && error.cause !== undefined ? [...lines, ...errorLines(error.cause, depth + 1)] : lines;
}

/**
 * Loads the bot module (its default export: `(client) => bot`, given a client of the fake), serves
 * `bot.handle` as a webhook on loopback and points the fake's web inbox at it. A fake of several
 * accounts gets one bot per account, each made with that account's client (`createAccounts`), and each
 * event goes to the bot of the account that received it, which answers through that account.
 */
export async function runBot(
  name: string,
  mock: MockServer,
  log: (line: string) => void,
): Promise<RunningBot> {
  const path = modulePath(name);
  let loaded: { default?: unknown };
  try {
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    const hint = /\.[cm]?ts$/.test(path)
      ? ' (a TypeScript module needs a Node that strips types, or: npx tsx node_modules/.bin/oa ...)'
      : '';
    throw new UsageError(`--bot ${name}: could not load it: ${(error as Error).message}${hint}`);
  }
  if (typeof loaded.default !== 'function') {
    throw new UsageError(`--bot ${name}: its default export must be a function (client) => bot (createBot)`);
  }
  const served = mock.accounts;
  const accounts = createAccounts({
    credentials: (account) => {
      const found = served.find((a) => a.username === account);
      return found && { apiKey: found.apiKey, apiSecret: found.apiSecret };
    },
    clientOptions: { baseUrl: mock.url },
  });
  const bots = new Map<string, Partial<Bot>>();
  for (const { username } of served) {
    const bot = (await loaded.default(accounts.client(username))) as Partial<Bot>;
    if (typeof bot?.handle !== 'function') {
      await accounts.close();
      throw new UsageError(
        `--bot ${name}: its default export returned no bot (createBot of oa-messaging/bot)`,
      );
    }
    bots.set(username, bot);
  }
  const onEvent: Bot['handle'] = (event, context) => {
    const bot = bots.get(accounts.accountOf(event) ?? '');
    if (!bot?.handle) {
      return Promise.reject(new OAConfigError(`no account '${String(event.username)}' in this fake`));
    }
    return bot.handle(event, context);
  };
  const print = (message: string, details?: Record<string, unknown>) => {
    log(`bot: ${message}`);
    if (details?.error !== undefined) for (const line of errorLines(details.error)) log(`  ${line}`);
  };
  const handler = createWebhookHandler({ onEvent, logger: { warn: print, error: print } });
  const server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/oa/webhook`;
  mock.webhookUrl = url;
  return {
    url,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await accounts.close();
    },
  };
}
