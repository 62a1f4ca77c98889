/** The `oa` command line: its commands, and how a run ends (an exit code, never a stack trace). */
import { Command, CommanderError } from 'commander';
import { VERSION } from '../index.js';
import { broadcastCommand } from './commands/broadcast.js';
import { exampleCommand } from './commands/example.js';
import { inboundCommands } from './commands/inbound.js';
import { mockServerCommand } from './commands/mock-server.js';
import { outboxCommands } from './commands/outbox.js';
import { sendCommands } from './commands/send.js';
import { logoutCommand, tokenCommand } from './commands/token.js';
import { uploadCommands } from './commands/upload.js';
import { webhookCommands } from './commands/webhook.js';
import { EXIT, ExitError } from './errors.js';
import { unknownOptionsFirst } from './flags.js';

const FOOTER = `
Configuration: flags, then the environment (OA_BASE_URL, OA_API_KEY, OA_API_SECRET), then ./.env
(or --dotenv). Also: OA_ALLOW_INSECURE_HTTP=1 (as --allow-insecure-http), REDIS_URL (as --redis),
OA_LOG=debug|info|warn|error|off (the SDK's log lines).
The token pair is kept between commands in $XDG_CONFIG_HOME/oa/tokens (else ~/.config/oa/tokens, or
$OA_CONFIG_DIR/tokens), one file per base URL and api key, readable by you only, never the secret;
oa logout removes it.
Exit codes: 0 success, 1 API or network error, 2 usage error (nothing was sent).
Try it offline: oa mock-server, then point OA_BASE_URL at the URL it prints; play a user writing
to your webhook with oa inbound text "Hi" --to <webhook-url>.`;

/** Settings every command shares; `addCommand` does not pass them down, so they are set on each. */
function configure(command: Command): void {
  command
    // A usage error ends the run with an exception that `main` turns into exit code 2.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    // Commander's own messages start "error: "; every error of `oa` starts "oa: ".
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'oa: ')) });
  unknownOptionsFirst(command);
  for (const sub of command.commands) configure(sub);
}

/** A fresh `oa` program. */
function createProgram(): Command {
  const program = new Command('oa')
    .description('The OA Public Messaging API from the command line.')
    .version(VERSION, '-V, --version', 'print the version')
    .addCommand(tokenCommand())
    .addCommand(logoutCommand())
    .addCommand(sendCommands())
    .addCommand(broadcastCommand())
    .addCommand(uploadCommands())
    .addCommand(webhookCommands())
    .addCommand(outboxCommands())
    .addCommand(mockServerCommand())
    .addCommand(inboundCommands())
    .addCommand(exampleCommand())
    .addHelpText('after', FOOTER);
  configure(program);
  return program;
}

/** Runs `oa` with `argv` (as `process.argv`) and resolves to its exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await createProgram().parseAsync(argv);
    return EXIT.ok;
  } catch (error) {
    // Commander has printed its message (or the help): a help or version request is a success.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof ExitError) return error.code;
    throw error;
  }
}
