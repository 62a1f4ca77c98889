/** `oa webhook listen`: receives the OA's webhook events and prints each one. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Command } from 'commander';
import { createWebhookHandler } from '../../webhook/index.js';
import { describeEvent } from '../describe-event.js';
import { listenError } from '../errors.js';
import { port, withJsonOption } from '../options.js';
import type { Output } from '../output.js';
import { runAction } from '../run-action.js';
import { untilSignalled } from '../signals.js';

interface ListenFlags {
  port: number;
  host: string;
  path: string;
  json?: boolean;
}

/** Serves the webhook handler at `path` until SIGINT or SIGTERM. */
async function listen(options: ListenFlags, out: Output): Promise<void> {
  const path = options.path.startsWith('/') ? options.path : `/${options.path}`;
  const handler = createWebhookHandler({
    // --json prints the body as it arrived; the lines describe the typed view.
    onEvent: (event) => out.event(event.raw, describeEvent(event)),
    // The OA may deliver an event again; one line per message is what a reader wants.
    dedupe: true,
    logger: { warn: (message) => out.notice(message), error: (message) => out.notice(message) },
  });
  const server = createServer((req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname === path) return void handler(req, res);
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(listenError(error, options.host, options.port)));
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  // Listening for the signals before saying the receiver is up: a reader may stop it at that line.
  const stopped = untilSignalled();
  out.notice(`Listening for OA webhook events at http://${host}:${address.port}${path} (Ctrl+C to stop)`);
  await stopped;
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  out.notice('Stopped.');
}

/** The `webhook` command and its `listen` subcommand. */
export function webhookCommands(): Command {
  const listenCommand = withJsonOption(
    new Command('listen')
      .description('receive webhook events and print each one (one JSON line each with --json) until Ctrl+C')
      .option('--port <port>', 'the port to listen on (0: any free port)', port, 3000)
      .option('--host <host>', 'the address to listen on', '127.0.0.1')
      .option('--path <path>', 'the path events are posted to; other paths answer 404', '/oa/webhook'),
  ).action((options: ListenFlags, command: Command) => runAction(command, (out) => listen(options, out)));
  return new Command('webhook')
    .description('receive the events the OA posts to its webhook_url')
    .addCommand(listenCommand);
}
