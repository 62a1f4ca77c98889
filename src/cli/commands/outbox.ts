/** `oa outbox add|work|status|cancel`: a campaign kept in Redis (`oa-messaging/queue`), sent by workers. */
import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import { sleep } from '../../core/call-control.js';
import { OAValidationError } from '../../index.js';
import {
  createOutbox,
  type Outbox,
  type OutboxEntry,
  type OutboxJobStatus,
  type OutboxState,
} from '../../queue/index.js';
import { createRedisCoordination } from '../../redis/index.js';
import { campaignProgress, campaignTotals, countsLine } from '../campaign-progress.js';
import { type ClientFlags, withClient } from '../client.js';
import { fileError, HintedError, UsageError } from '../errors.js';
import { positiveInteger, withConnectionOptions, withJsonOption } from '../options.js';
import { runAction } from '../run-action.js';
import { untilSignalled } from '../signals.js';

interface OutboxFlags {
  shards?: number;
  redis?: string;
  name?: string;
  json?: boolean;
  account?: string;
}

/** The options every `outbox` subcommand takes: where the queue is. */
function withOutboxOptions(command: Command): Command {
  return command
    .option('--redis <url>', 'the Redis URL (default: $REDIS_URL, else redis://127.0.0.1:6379)')
    .option('--name <name>', 'the outbox name (default: oa-outbox)')
    .option(
      '--shards <n>',
      "the outbox's shards, as the app's createOutbox({ shards }) (default: 8 on a Redis Cluster, else 1)",
      positiveInteger,
    );
}

/** The `{ account }` option of a call, from `--account`. */
function accountOf(flags: OutboxFlags): { account?: string } {
  return flags.account === undefined ? {} : { account: flags.account };
}

function redisUrl(flags: OutboxFlags): string {
  return flags.redis ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
}

/** `url` without its user name and password, to be shown. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return 'the Redis URL given';
  }
}

/** Redis that could not be reached, with what to do: start it, or point `oa` at yours. */
function redisHint(error: unknown, flags: OutboxFlags): unknown {
  const name = (error as { name?: unknown } | null)?.name;
  const message = error instanceof Error ? error.message : '';
  if (
    !(name === 'OAConnectionError' && /\bRedis\b/.test(message)) &&
    !/Redis could not be reached/.test(message)
  ) {
    return error;
  }
  const from =
    flags.redis !== undefined ? '--redis' : process.env.REDIS_URL !== undefined ? 'REDIS_URL' : 'the default';
  return new HintedError(
    error,
    `Is Redis running at ${shownUrl(redisUrl(flags))} (${from})? Start it, or give its URL with --redis URL (or REDIS_URL).`,
  );
}

async function withOutbox<T>(flags: OutboxFlags, work: (outbox: Outbox) => Promise<T>): Promise<T> {
  const outbox = createOutbox({
    connection: { url: redisUrl(flags) },
    ...(flags.name === undefined ? {} : { name: flags.name }),
    ...(flags.shards === undefined ? {} : { shards: flags.shards }),
  });
  try {
    return await work(outbox);
  } catch (error) {
    throw redisHint(error, flags);
  } finally {
    await outbox.close();
  }
}

/** Entries of a campaign file (a JSON array, or one JSON object per line), each with its place. */
async function readEntries(file: string): Promise<{ entries: OutboxEntry[]; places: string[] }> {
  const text = (
    await readFile(file, 'utf8').catch((error: unknown) => {
      throw fileError(error, '--file', file);
    })
  ).trim();
  if (text.startsWith('[')) {
    try {
      const entries = JSON.parse(text) as OutboxEntry[];
      return { entries, places: entries.map((_, i) => `${file} entry ${i + 1}`) };
    } catch (error) {
      throw new UsageError(`${file}: not a JSON array (${(error as Error).message})`);
    }
  }
  const entries: OutboxEntry[] = [];
  const places: string[] = [];
  // Lines counted from 1, as an editor shows them.
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      entries.push(JSON.parse(line) as OutboxEntry);
    } catch {
      throw new UsageError(`${file} line ${i + 1}: not JSON: give one JSON object per line, or a JSON array`);
    }
    places.push(`${file} line ${i + 1}`);
  });
  return { entries, places };
}

/** A refused entry, told by its place in what the user gave; nothing was queued. */
function queueRefusal(error: unknown, places: string[]): unknown {
  if (!(error instanceof OAValidationError) || error.issues.length === 0) return error;
  const lines = error.issues.map(({ path, message }) => {
    const [index, ...rest] = path;
    const place = typeof index === 'number' ? places[index] : undefined;
    const where = place ? [place, rest.join('.')] : [path.join('.')];
    return `${where.filter(Boolean).join(': ')}: ${message}`;
  });
  return new UsageError(`${lines.join('\n  ')} (nothing was queued)`);
}

function addCommand(): Command {
  return withJsonOption(
    withOutboxOptions(new Command('add'))
      .description(
        'queue sends: a campaign file (JSON lines or an array of { method, params, key }) or one send',
      )
      .option('--file <path>', 'the campaign file')
      .option('--method <method>', 'one send: the client method, e.g. sendText')
      .option('--params <json>', 'one send: its params as JSON')
      .option('--key <key>', 'one send: its idempotency key')
      .option('--at <date>', 'send no sooner than this time (ISO 8601, e.g. 2026-12-01T09:00:00Z)', sendTime)
      .option(
        '--account <id>',
        "the account that sends them (the entries' own account, when they give one, wins)",
      ),
  ).action(
    (
      flags: OutboxFlags & { file?: string; method?: string; params?: string; key?: string; at?: Date },
      command,
    ) =>
      runAction(command, async (out) => {
        let entries: OutboxEntry[];
        let places = ['--params'];
        if (flags.file !== undefined) {
          ({ entries, places } = await readEntries(flags.file));
        } else if (flags.method !== undefined && flags.params !== undefined && flags.key !== undefined) {
          let params: unknown;
          try {
            params = JSON.parse(flags.params);
          } catch {
            throw new UsageError('--params must be JSON');
          }
          entries = [{ method: flags.method, params, key: flags.key } as OutboxEntry];
        } else {
          throw new UsageError('give --file, or --method, --params and --key');
        }
        const at = flags.at;
        if (at) entries = entries.map((entry) => ({ ...entry, at }));
        const account = flags.account;
        if (account !== undefined) entries = entries.map((entry) => ({ account, ...entry }));
        await withOutbox(flags, async (outbox) => {
          const { added, known } = await outbox.addMany(entries).catch((error: unknown) => {
            throw queueRefusal(error, places);
          });
          const counts = await outbox.counts(accountOf(flags));
          out.result({ added, known, counts }, [
            `added ${added}, already known ${known}`,
            countsLine(counts),
          ]);
        });
      }),
  );
}

function workCommand(): Command {
  return withConnectionOptions(withOutboxOptions(new Command('work')))
    .description('send queued jobs, sharing the quota through Redis, until Ctrl+C (or --until-done)')
    .option('--concurrency <n>', 'jobs at once (default: 4)', positiveInteger)
    .option('--until-done', 'stop once no job is waiting, delayed or active')
    .option(
      '--account <id>',
      "send that account's jobs (added with --account), with the credentials given: it takes that account's turns",
    )
    .action((flags: OutboxFlags & ClientFlags & { concurrency?: number; untilDone?: boolean }, command) =>
      runAction(command, async (out) => {
        const coordination = createRedisCoordination({ url: redisUrl(flags) });
        try {
          await withClient(
            flags,
            out,
            (client) =>
              withOutbox(flags, async (outbox) => {
                const worker = outbox.work({
                  client,
                  concurrency: flags.concurrency ?? 4,
                  ...accountOf(flags),
                });
                const progress = campaignProgress(out.progressStream);
                let stop = false;
                void untilSignalled().then(() => {
                  stop = true;
                });
                let counts = await outbox.counts(accountOf(flags));
                try {
                  for (;;) {
                    progress.update(counts);
                    const { done, total } = campaignTotals(counts);
                    if (stop || (flags.untilDone && done === total)) break;
                    await sleep(500, undefined, 'the progress poll').done;
                    counts = await outbox.counts(accountOf(flags));
                  }
                } finally {
                  progress.stop();
                  await worker.close();
                }
                out.result(counts, countsLine(counts));
              }),
            { coordination },
          );
        } catch (error) {
          throw redisHint(error, flags);
        } finally {
          await coordination.close();
        }
      }),
    );
}

/** What an operator does about a job in each state (the table of outbox states in docs/outbox.md). */
const TO_DO: Record<OutboxState, string> = {
  waiting: 'not sent yet; a worker will send it',
  delayed: 'not sent yet; it waits for its delay or its next try',
  active: 'a worker is sending it',
  orphaned:
    'its worker stopped renewing its lock (it died); a running worker takes it within lockDurationMs, and ends it unknown if its request may have left',
  delivered: 'the API accepted it; nothing to do',
  unknown:
    'it may have been delivered; check before sending it again (under a new key), it is never resent by itself',
  failed: 'it was certainly not delivered; fix the cause, then add it again under a new key',
};

/** One key's status as a line: its state, what to do, then its result or error. */
function statusLine(key: string, status: OutboxJobStatus): string {
  const { state, ...rest } = status;
  const details = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  return `${key}: ${state}: ${TO_DO[state]}${details}`;
}

function statusCommand(): Command {
  return withJsonOption(
    withOutboxOptions(new Command('status'))
      .description("print the outbox's counts per state, or one key's state, result or error")
      .option('--key <key>', 'one job, by its idempotency key')
      .option('--account <id>', "that account's counts, or its job of --key"),
  ).action((flags: OutboxFlags & { key?: string }, command) =>
    runAction(command, (out) =>
      withOutbox(flags, async (outbox) => {
        if (flags.key === undefined) {
          const counts = await outbox.counts(accountOf(flags));
          out.result(counts, countsLine(counts));
          return;
        }
        const status = (await outbox.get(flags.key, accountOf(flags))) ?? null;
        out.result(status, status ? statusLine(flags.key, status) : `${flags.key}: not known`);
      }),
    ),
  );
}

/** `--at`: a date and time `Date` can read, refused as a usage error otherwise. */
function sendTime(value: string): Date {
  const at = new Date(value);
  if (value.trim() === '' || Number.isNaN(at.getTime())) {
    throw new InvalidArgumentError('Not a date and time (ISO 8601, e.g. 2026-12-01T09:00:00Z).');
  }
  return at;
}

function cancelCommand(): Command {
  return withJsonOption(
    withOutboxOptions(new Command('cancel'))
      .description(
        'remove a job not sent yet (waiting or delayed; an active or ended one is kept), or with --account and no --key every job of that account not started (--bulk: only its campaign)',
      )
      .option('--key <key>', 'the job, by its idempotency key')
      .option('--account <id>', 'the account the key was added with; without --key, all its jobs not started')
      .option('--bulk', 'with --account and no --key: only its bulk (campaign) jobs, its replies go on'),
  ).action((flags: OutboxFlags & { key?: string; bulk?: boolean }, command) =>
    runAction(command, (out) =>
      withOutbox(flags, async (outbox) => {
        if (flags.key === undefined) {
          if (flags.account === undefined) {
            throw new UsageError('cancel needs --key, or --account (with --bulk for its campaign only)');
          }
          const bulk = flags.bulk === true ? { bulk: true } : {};
          const result = await outbox.cancelAll({ account: flags.account, ...bulk });
          const what = flags.bulk === true ? 'bulk jobs' : 'jobs';
          out.result(result, `${flags.account}: ${result.cancelled} ${what} not started cancelled`);
          return;
        }
        if (flags.bulk === true) throw new UsageError('--bulk goes with --account and no --key');
        const result = await outbox.cancel(flags.key, accountOf(flags));
        const why = result.cancelled
          ? ''
          : result.state === undefined
            ? ': not known'
            : `: ${result.state}: ${TO_DO[result.state]}`;
        out.result(result, `${flags.key}: ${result.cancelled ? 'cancelled' : `not cancelled${why}`}`);
      }),
    ),
  );
}

function accountsCommand(): Command {
  return withJsonOption(
    withOutboxOptions(new Command('accounts'))
      .description(
        "every account's counts, busiest first, whether it is paused, and how long its oldest job has waited",
      )
      .option('--top <n>', 'only the busiest n accounts', positiveInteger),
  ).action((flags: OutboxFlags & { top?: number }, command) =>
    runAction(command, (out) =>
      withOutbox(flags, async (outbox) => {
        const accounts = await outbox.accounts(flags.top === undefined ? {} : { top: flags.top });
        const lines = accounts.map((a) => {
          const { account, paused, oldestWaitingMs, ...counts } = a;
          const waited =
            oldestWaitingMs === undefined ? '' : `, oldest waiting ${Math.round(oldestWaitingMs / 1000)} s`;
          return `${account}${paused ? ' (paused)' : ''}: ${countsLine(counts)}${waited}`;
        });
        out.result(accounts, lines.length > 0 ? lines.join('\n') : 'No account has a job in this outbox.');
      }),
    ),
  );
}

/** `oa outbox pause` and `resume`. */
function holdCommand(name: 'pause' | 'resume'): Command {
  const description =
    name === 'pause'
      ? "hold one account: its jobs stay, none starts, every other account goes on (until 'oa outbox resume')"
      : "let a paused account's jobs start again, in their turn";
  return withJsonOption(
    withOutboxOptions(new Command(name))
      .description(description)
      .requiredOption('--account <id>', 'the account'),
  ).action((flags: OutboxFlags & { account: string }, command) =>
    runAction(command, (out) =>
      withOutbox(flags, async (outbox) => {
        await outbox[name]({ account: flags.account });
        out.result(
          { account: flags.account, paused: name === 'pause' },
          `${flags.account}: ${name === 'pause' ? 'paused' : 'resumed'}`,
        );
      }),
    ),
  );
}

/** `oa outbox`. */
export function outboxCommands(): Command {
  return new Command('outbox')
    .description('a campaign kept in Redis: add sends, run workers, watch the counts (needs bullmq, ioredis)')
    .addCommand(addCommand())
    .addCommand(workCommand())
    .addCommand(statusCommand())
    .addCommand(accountsCommand())
    .addCommand(holdCommand('pause'))
    .addCommand(holdCommand('resume'))
    .addCommand(cancelCommand());
}
