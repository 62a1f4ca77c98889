/** `oa mock-server`: the fake OA API of `oa-messaging/testing`, for trying `oa` and your code offline. */
import { Command } from 'commander';
import { createMockServer } from '../../testing/index.js';
import { listenError } from '../errors.js';
import { httpUrl, port, positiveInteger, withJsonOption } from '../options.js';
import { runAction } from '../run-action.js';
import { untilSignalled } from '../signals.js';

interface MockServerFlags {
  port: number;
  host: string;
  transcodeMs?: number;
  webhook?: string;
  json?: boolean;
}

/** The `mock-server` command. */
export function mockServerCommand(): Command {
  return withJsonOption(
    new Command('mock-server')
      .description(
        'run the fake OA API (the testing kit) until Ctrl+C; prints its URL and test credentials. ' +
          'Open the URL in a browser for the web inbox: what each user received, every request, faults',
      )
      .option('--port <port>', 'the port to listen on (0: any free port)', port, 0)
      .option('--host <host>', 'the address to listen on', '127.0.0.1')
      .option(
        '--transcode-ms <ms>',
        'how long an uploaded video stays in convert status (default: 2000)',
        positiveInteger,
      )
      .option(
        '--webhook <url>',
        'where the web inbox posts the replies typed in it (can be set in the page)',
        httpUrl,
      ),
  ).action((options: MockServerFlags, command: Command) =>
    runAction(command, async (out) => {
      const mock = await createMockServer({
        port: options.port,
        host: options.host,
        ...(options.transcodeMs === undefined ? {} : { transcodeMs: options.transcodeMs }),
        ...(options.webhook === undefined ? {} : { webhookUrl: options.webhook }),
      }).catch((error: unknown) => {
        throw listenError(error, options.host, options.port);
      });
      // The fake's own test credentials: printing them is the point, they open nothing real.
      const env = { OA_BASE_URL: mock.url, OA_API_KEY: mock.apiKey, OA_API_SECRET: mock.apiSecret };
      // One JSON line with --json: the server keeps running, so a reader goes by lines.
      out.event({ url: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret }, [
        `Fake OA API listening at ${mock.url}`,
        ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
      ]);
      out.notice(`Web inbox: open ${mock.url}/ in a browser.`);
      out.notice('Press Ctrl+C to stop.');
      await untilSignalled();
      await mock.close();
      out.notice(`Stopped. The fake received ${mock.requests.length} requests.`);
    }),
  );
}
