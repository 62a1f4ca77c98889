/**
 * `oa token`: a new access token, for a quick call with curl or a check of the credentials (it always
 * logs in, and keeps the new pair for the next commands); `oa logout`: forgets the kept pair.
 */
import { Command } from 'commander';
import { oaKey } from '../../core/oa-state.js';
import { type ClientFlags, withClient } from '../client.js';
import { resolveAccount } from '../config.js';
import { withConnectionOptions, withJsonOption } from '../options.js';
import { runAction } from '../run-action.js';
import { FileTokenStore, tokenCacheDir } from '../token-cache.js';

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

interface LogoutFlags {
  baseUrl?: string;
  apiKey?: string;
  dotenv?: string;
  all?: boolean;
  json?: boolean;
}

/** The `logout` command: forgets the token pair `oa` keeps between commands. */
export function logoutCommand(): Command {
  return withJsonOption(
    new Command('logout')
      .description(
        `remove the token pair oa keeps between commands for this base URL and api key (in ${tokenCacheDir()})`,
      )
      .option('--base-url <url>', 'the API base URL (default: $OA_BASE_URL)')
      .option('--api-key <key>', 'the API key (default: $OA_API_KEY)')
      .option('--dotenv <path>', 'read OA_* variables from this file (default: ./.env when present)')
      .option('--all', 'remove every pair kept, whatever its base URL and api key'),
  ).action((options: LogoutFlags, command: Command) =>
    runAction(command, async (out) => {
      if (options.all) {
        const removed = new FileTokenStore('', { warn: (line) => out.notice(line) }).clear();
        out.result({ removed }, `Removed ${removed} kept token pair${removed === 1 ? '' : 's'}.`);
        return;
      }
      const { baseUrl, apiKey } = resolveAccount(options);
      // No secret needed: the pair is removed whatever secret it was kept with.
      const store = new FileTokenStore(baseUrl, { warn: (line) => out.notice(line) });
      // The client keeps its pair under its OA's key (base URL + api key): forget that one.
      const removed = store.forget(oaKey(new URL(baseUrl), apiKey)) ? 1 : 0;
      out.result(
        { removed },
        removed
          ? `Logged out of ${baseUrl}: the kept token pair is removed.`
          : `No token pair kept for ${baseUrl}.`,
      );
    }),
  );
}
