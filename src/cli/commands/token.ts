/** `oa token`: a new access token, for a quick call with curl or a check of the credentials. */
import { Command } from 'commander';
import { type ClientFlags, withClient } from '../client.js';
import { withConnectionOptions } from '../options.js';
import { runAction } from '../run-action.js';

/** The `token` command. */
export function tokenCommand(): Command {
  return withConnectionOptions(
    new Command('token')
      .description('log in with the API key and secret and print the access token (only the token)')
      .addHelpText(
        'after',
        '\nWith --json: { access_token, token_type, expires_in }. The refresh token is never printed.',
      ),
  ).action((options: ClientFlags, command: Command) =>
    runAction(command, (out) =>
      withClient(options, out, async (client) => {
        const { access_token, token_type, expires_in } = await client.generateToken();
        out.token({ access_token, token_type, expires_in }, access_token);
      }),
    ),
  );
}
