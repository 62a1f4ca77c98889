/** `oa mock-server`: the fake OA API of `oa-messaging/testing`, for trying `oa` and your code offline. */
import { Command, InvalidArgumentError } from 'commander';
import { createMockServer, type FakeAccountOptions, type RecordedRequest } from '../../testing/index.js';
import { type RunningBot, runBot } from '../bot-runner.js';
import { listenError, UsageError } from '../errors.js';
import { idWithUsers, type MembersFlags, membersFrom, membersLines } from '../members.js';
import { collect, httpUrl, port, positiveInteger, withJsonOption } from '../options.js';
import { runAction } from '../run-action.js';
import { untilSignalled } from '../signals.js';

interface MockServerFlags extends MembersFlags {
  port: number;
  accounts?: number;
  host: string;
  transcodeMs?: number;
  webhook?: string;
  bot?: string;
  quiet?: boolean;
  json?: boolean;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The most accounts `--accounts` starts: enough for any trial, few enough to print. */
const MAX_ACCOUNTS = 50;

/** `--accounts N`: N accounts named oa-account-1 ... with their own test keys. */
function accountsFlag(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_ACCOUNTS) {
    throw new InvalidArgumentError(`a whole number of accounts from 1 to ${MAX_ACCOUNTS}`);
  }
  return n;
}

/** The accounts of `--accounts N`: their usernames, keys and secrets, printed for the user to copy. */
function testAccounts(n: number): FakeAccountOptions[] {
  return Array.from({ length: n }, (_, i) => ({
    username: `oa-account-${i + 1}`,
    apiKey: `test-api-key-${i + 1}`,
    apiSecret: `test-api-secret-${i + 1}`,
  }));
}

/** One request as a line: time, method, path, status (or how it ended), the fault that hit it, ms. */
function requestLine(r: RecordedRequest): string {
  const at = new Date(r.at);
  const clock = `${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}.${pad(at.getMilliseconds(), 3)}`;
  const ended = r.outcome === 'answered' ? [] : [r.outcome];
  return [
    clock,
    r.method,
    `${r.path}${r.query}`,
    ...(r.status === undefined ? [] : [String(r.status)]),
    ...ended,
    ...(r.fault ? [`fault: ${r.fault}`] : []),
    ...(r.durationMs === undefined ? [] : [`${r.durationMs} ms`]),
  ].join(' ');
}

/** The `mock-server` command. */
export function mockServerCommand(): Command {
  return withJsonOption(
    new Command('mock-server')
      .description(
        'run the fake OA API (the testing kit) until Ctrl+C; prints its URL, test credentials and ' +
          'directory, then one line per request. Open the URL in a browser for the web inbox: what ' +
          'each user received, every request, faults',
      )
      .option('--port <port>', 'the port to listen on (0: any free port)', port, 0)
      .option('--host <host>', 'the address to listen on', '127.0.0.1')
      .option(
        '--accounts <n>',
        'serve N OA accounts behind the one URL (oa-account-1 ..., each its own key): prints each ' +
          "one's credentials; the web inbox shows each one's conversations",
        accountsFlag,
      )
      .option(
        '--transcode-ms <ms>',
        'how long an uploaded video stays in convert status (default: 2000)',
        positiveInteger,
      )
      .option(
        '--webhook <url>',
        'where the web inbox posts the replies typed in it (can be set in the page)',
        httpUrl,
      )
      .option(
        '--bot <module>',
        'answer the web inbox with a bot: support-bot (the example), or a module whose default export ' +
          'is (client) => bot (createBot of oa-messaging/bot); with --accounts, one bot per account, ' +
          'each answering through its own account',
      )
      .option('--user <user_id>', 'a user of the OA: who --target all reaches (repeatable)', collect)
      .option('--group <id=users>', 'a group and its members: ID=USER,USER (repeatable)', idWithUsers)
      .option(
        '--member-session <id=users>',
        'a member-group session and its members: ID=USER,USER (repeatable)',
        idWithUsers,
      )
      .option(
        '--members <file>',
        'the directory as JSON: { "all": [users], "groups": { ID: [users] }, "memberSessions": { ID: [users] } }',
      )
      .option('--no-demo', 'start with no directory (by default: a demo one of 5 users, 2 groups, 1 session)')
      .option('--quiet', 'no line per request'),
  ).action((options: MockServerFlags, command: Command) =>
    runAction(command, async (out) => {
      if (options.bot !== undefined && options.webhook !== undefined) {
        throw new UsageError('--bot and --webhook both say where replies go: give one');
      }
      const accounts = options.accounts === undefined ? undefined : testAccounts(options.accounts);
      const members = membersFrom(options);
      const several = accounts !== undefined && accounts.length > 1;
      const mock = await createMockServer({
        port: options.port,
        host: options.host,
        ...(accounts === undefined ? {} : { accounts }),
        members,
        ...(options.transcodeMs === undefined ? {} : { transcodeMs: options.transcodeMs }),
        ...(options.webhook === undefined ? {} : { webhookUrl: options.webhook }),
        ...(options.quiet
          ? {}
          : {
              onRequest: (request, account) =>
                out.notice(several ? `${requestLine(request)} (${account})` : requestLine(request)),
            }),
      }).catch((error: unknown) => {
        throw listenError(error, options.host, options.port);
      });
      let bot: RunningBot | undefined;
      if (options.bot !== undefined) {
        bot = await runBot(options.bot, mock, (line) => out.notice(line)).catch(async (error: unknown) => {
          await mock.close();
          throw error;
        });
      }
      // The fake's own test credentials: printing them is the point, they open nothing real.
      const env = { OA_BASE_URL: mock.url, OA_API_KEY: mock.apiKey, OA_API_SECRET: mock.apiSecret };
      // Listening for the signals before saying the server is up: a reader may stop it at that line.
      const stopped = untilSignalled();
      // One JSON line with --json: the server keeps running, so a reader goes by lines.
      const credentials = mock.accounts.map(({ username, apiKey, apiSecret }) => ({
        username,
        apiKey,
        apiSecret,
      }));
      out.event(
        {
          url: mock.url,
          apiKey: mock.apiKey,
          apiSecret: mock.apiSecret,
          ...(accounts === undefined ? {} : { accounts: credentials }),
          members,
        },
        [
          `Fake OA API listening at ${mock.url}`,
          ...(accounts === undefined
            ? []
            : [
                `${credentials.length} account${credentials.length === 1 ? '' : 's'}, each its own key (the env lines below use the first):`,
                ...credentials.map(
                  (a) => `  ${a.username}: OA_API_KEY=${a.apiKey} OA_API_SECRET=${a.apiSecret}`,
                ),
              ]),
          ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
        ],
      );
      const ownDirectory = options.members ?? options.user ?? options.group ?? options.memberSession;
      out.notice(
        ownDirectory === undefined && options.demo
          ? 'Demo directory (yours with --members FILE, or --user, --group, --member-session; none with --no-demo):'
          : 'Directory:',
      );
      for (const line of membersLines(members)) out.notice(line);
      out.notice(`Web inbox: open ${mock.url}/ in a browser.`);
      if (bot) out.notice(`Bot ${options.bot} answers what you type there (its webhook: ${bot.url}).`);
      out.notice('Press Ctrl+C to stop.');
      await stopped;
      await bot?.close();
      await mock.close();
      const received = mock.accounts.reduce((n, account) => n + account.requests.length, 0);
      out.notice(`Stopped. The fake received ${received} requests.`);
    }),
  );
}
