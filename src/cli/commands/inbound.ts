/**
 * `oa inbound text|image|video|audio`: plays a user of the OA, posting a realistic inbound event to a
 * webhook receiver, as the OA would (the `sendInboundMessage` of `oa-messaging/testing`).
 */
import { Command } from 'commander';
import { type InboundMessage, sendInboundMessage } from '../../testing/index.js';
import { readEnvVariable } from '../config.js';
import { httpUrl, withJsonOption } from '../options.js';
import type { Output } from '../output.js';
import { runAction } from '../run-action.js';

/** Who writes when `--from` is not given: the first user of `oa mock-server`'s demo directory. */
const DEFAULT_FROM = 'user-1';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The fake whose web inbox is told of the message: `--mock`, else `OA_BASE_URL` on loopback. */
function inboxOf(flags: InboundFlags): string | undefined {
  if (flags.mock !== undefined) return flags.mock;
  const baseUrl = readEnvVariable('OA_BASE_URL', flags.dotenv);
  return baseUrl && URL.canParse(baseUrl) && LOOPBACK.has(new URL(baseUrl).hostname) ? baseUrl : undefined;
}

/**
 * Tells the fake's web inbox of the message, so that it shows in the user's conversation before the
 * replies it caused. Not the run's outcome: a fake that is not there (or a real API) is a notice.
 */
async function tellInbox(inbox: string, record: Record<string, unknown>, out: Output): Promise<void> {
  try {
    const res = await fetch(new URL('/_inbox/inbound', inbox), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(record),
      signal: AbortSignal.timeout(5_000),
    });
    await res.body?.cancel();
    if (!res.ok) out.notice(`oa: ${inbox} did not take the message into its web inbox (${res.status})`);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    out.notice(`oa: the web inbox at ${inbox} could not be told of the message (${reason})`);
  }
}

/** The network codes of a receiver that is not there (no server, no such host, no route). */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
]);

/** A post that reached no receiver, said in flags; any other error as it is. */
function unreachable(error: unknown, to: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && UNREACHABLE.has(code)) {
    return new Error(
      `the receiver at --to ${to} could not be reached (${code}): is it running, and listening at that URL? Start it (e.g. oa webhook listen), or fix --to`,
    );
  }
  if ((error as { name?: unknown } | null)?.name === 'TimeoutError') {
    return new Error(`the receiver at --to ${to} did not answer within 10 s`);
  }
  return error;
}

interface InboundFlags {
  to: string;
  from: string;
  account?: string;
  mock?: string;
  dotenv?: string;
  json?: boolean;
}

/** One `oa inbound` subcommand: what it posts, built from its argument. */
function inboundCommand(name: string, description: string, message: (text?: string) => InboundMessage) {
  const command = new Command(name).description(description);
  if (name === 'text') command.argument('<text>', 'what the user writes');
  return withJsonOption(
    command
      .requiredOption(
        '--to <url>',
        'the webhook URL to post to, e.g. http://127.0.0.1:3000/oa/webhook',
        httpUrl,
      )
      .option('--from <user_id>', "the user who writes (From_Account; default: 'user-1')", DEFAULT_FROM)
      .option(
        '--account <username>',
        "the OA account written to: the event's username, and that account's conversation in the " +
          "fake's web inbox (default: the event says 'oa_account', the inbox shows the first account)",
      )
      .option(
        '--mock <url>',
        "the fake OA server whose web inbox shows the message in the user's conversation " +
          '(default: $OA_BASE_URL when it is on this machine)',
        httpUrl,
      )
      .option('--dotenv <path>', 'read OA_BASE_URL from this file (default: ./.env when present)'),
  ).action((...args: unknown[]) => {
    const cmd = args.at(-1) as Command;
    const flags = cmd.opts<InboundFlags>();
    const text = name === 'text' ? String(args[0]) : undefined;
    return runAction(cmd, async (out) => {
      const inbox = inboxOf(flags);
      const record = {
        ...(flags.account === undefined ? {} : { account: flags.account }),
        user_id: flags.from,
        kind: name,
        ...(text === undefined ? {} : { text }),
        webhookUrl: flags.to,
        at: Date.now(),
      };
      const delivery = await sendInboundMessage(flags.to, message(text), {
        from: flags.from,
        ...(flags.account === undefined ? {} : { username: flags.account }),
      }).catch(async (error: unknown) => {
        const told = unreachable(error, flags.to);
        if (inbox) await tellInbox(inbox, { ...record, error: (told as Error).message }, out);
        throw told;
      });
      if (inbox) await tellInbox(inbox, { ...record, status: delivery.status, answer: delivery.text }, out);
      const answered = `the receiver answered ${delivery.status}${delivery.text ? `: ${delivery.text.slice(0, 200)}` : ''}`;
      out.result(
        { status: delivery.status, body: delivery.body, event: delivery.event },
        `Posted ${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} message from ${flags.from} to ${flags.to}` +
          `${flags.account === undefined ? '' : ` (account ${flags.account})`}: ${answered}`,
      );
      // A receiver that refuses the event (a bad signature check, a crash) is what this run found.
      if (delivery.status >= 300) throw new Error(answered);
    });
  });
}

/** The `inbound` command and its subcommands. */
export function inboundCommands(): Command {
  return new Command('inbound')
    .description(
      'post an inbound event to your webhook, as a user writing to the OA would (try it with oa webhook listen)',
    )
    .addCommand(inboundCommand('text', 'a text message', (text) => text ?? ''))
    .addCommand(
      inboundCommand('image', 'an image (a fake CDN URL, three renditions)', () => ({ type: 'image' })),
    )
    .addCommand(inboundCommand('video', 'a video (5 s, a fake CDN URL)', () => ({ type: 'video' })))
    .addCommand(inboundCommand('audio', 'a voice message (3 s)', () => ({ type: 'sound' })));
}
