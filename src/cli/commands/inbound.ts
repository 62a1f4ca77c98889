/**
 * `oa inbound text|image|video|audio`: plays a user of the OA, posting a realistic inbound event to a
 * webhook receiver, as the OA would (the `sendInboundMessage` of `oa-messaging/testing`).
 */
import { Command } from 'commander';
import { type InboundMessage, sendInboundMessage } from '../../testing/index.js';
import { httpUrl, withJsonOption } from '../options.js';
import { runAction } from '../run-action.js';

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
  from?: string;
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
      .option('--from <user_id>', "the user who writes (From_Account; default: 'user_1')"),
  ).action((...args: unknown[]) => {
    const cmd = args.at(-1) as Command;
    const flags = cmd.opts<InboundFlags>();
    const text = name === 'text' ? String(args[0]) : undefined;
    return runAction(cmd, async (out) => {
      const delivery = await sendInboundMessage(flags.to, message(text), {
        ...(flags.from === undefined ? {} : { from: flags.from }),
      }).catch((error: unknown) => {
        throw unreachable(error, flags.to);
      });
      const answered = `the receiver answered ${delivery.status}${delivery.text ? `: ${delivery.text.slice(0, 200)}` : ''}`;
      out.result(
        { status: delivery.status, body: delivery.body, event: delivery.event },
        `Posted ${/^[aeiou]/.test(name) ? 'an' : 'a'} ${name} message from ${flags.from ?? 'user_1'} to ${flags.to}: ${answered}`,
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
