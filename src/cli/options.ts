/**
 * Options several commands share, and the parsers of option values. A value the parser refuses is a
 * usage error reported by commander (exit 2).
 */
import { type Command, InvalidArgumentError } from 'commander';

/** `--json` on every command. */
export function withJsonOption(command: Command): Command {
  return command.option('--json', 'print the result as JSON on stdout (errors as JSON on stderr)');
}

/** The options of every command that calls the API: where it is, who calls, and `--json`. */
export function withConnectionOptions(command: Command): Command {
  return withJsonOption(
    command
      .option('--base-url <url>', 'the API base URL (default: $OA_BASE_URL)')
      .option('--api-key <key>', 'the API key (default: $OA_API_KEY)')
      .option(
        '--api-secret <secret>',
        'the API key secret (default: $OA_API_SECRET; prefer the variable: arguments show in the process list)',
      )
      // Not `--env-file`: Node 20 takes that flag for itself even after the script's name, and exits.
      .option('--dotenv <path>', 'read OA_* variables from this file (default: ./.env when present)')
      .option(
        '--timeout <ms>',
        'per-request time limit in milliseconds (default: the SDK’s)',
        positiveInteger,
      )
      .option('--upload-timeout <ms>', 'per-request time limit of uploads (default: 600000)', positiveInteger)
      .option(
        '--max-retries <n>',
        'retries of a failure safe to repeat; 0 for none (default: 2)',
        nonNegativeInteger,
      )
      .option(
        '--max-busy-wait <ms>',
        'the longest a call waits out 429s and JOB_BUSY in all; 0 fails at once (default: 60000)',
        nonNegativeInteger,
      )
      .option('--no-rate-limit', "turn off the client's own rate limiter (e.g. behind a proxy that limits)")
      .option(
        '--allow-insecure-http',
        'allow a plain-http --base-url on a host other than localhost; only on a trusted network ' +
          '(or OA_ALLOW_INSECURE_HTTP=1)',
      )
      .option(
        '--header <"Name: value">',
        'a header sent with every request, e.g. a tracing one (repeatable)',
        header,
      ),
  );
}

/** A whole number from zero, e.g. a retry count. */
function nonNegativeInteger(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number < 0)
    throw new InvalidArgumentError('Not a whole number from 0.');
  return number;
}

/** Collects a repeatable `Name: value` header. */
function header(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const match = /^([^:\s]+):\s*(.*)$/.exec(value);
  if (!match?.[1]) throw new InvalidArgumentError('Expected "Name: value".');
  return { ...previous, [match[1]]: match[2] ?? '' };
}

/** A whole number above zero, e.g. a timeout in milliseconds. */
export function positiveInteger(value: string): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number) || number <= 0) throw new InvalidArgumentError('Not a positive integer.');
  return number;
}

/** A TCP port: 0 (any free port) to 65535. */
export function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65_535) {
    throw new InvalidArgumentError('Not a port number (0-65535).');
  }
  return number;
}

/** An http(s) URL, e.g. where a webhook receiver listens. */
export function httpUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError('Not a URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('Not an http(s) URL.');
  return value;
}

/** Collects a repeatable option into a list: `--user a --user b`. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
