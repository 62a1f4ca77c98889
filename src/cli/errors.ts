/**
 * How a run of `oa` ends: its exit codes, the error for a mistake in the command line that the parser
 * cannot see (a missing setting, an unreadable file), and which failures count as which.
 */
import { isOAError } from '../index.js';

/** The exit codes of `oa`. */
export const EXIT = {
  /** The command did what it was asked. */
  ok: 0,
  /** The API refused the request, or it could not be reached: nothing may be assumed sent. */
  failed: 1,
  /** The command line, the configuration or the input was wrong: nothing was sent. */
  usage: 2,
} as const;

/** A mistake in what the user asked for, found after parsing (a missing setting, a bad items file). */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** Ends a run with `code` once the failure has been reported. */
export class ExitError extends Error {
  override name = 'ExitError';
  readonly code: number;

  constructor(code: number) {
    super(`exit ${code}`);
    this.code = code;
  }
}

/**
 * A failure and what the user can do about it, in flags (`--redis URL`): reported as the failure, the
 * hint on a line of its own, with the failure's exit code.
 */
export class HintedError extends Error {
  override name = 'HintedError';
  readonly hint: string;

  constructor(cause: unknown, hint: string) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.hint = hint;
  }
}

/**
 * A file named by a flag that could not be read, as a usage error naming the flag (exit 2): the
 * error itself for any other failure.
 */
export function fileError(error: unknown, flag: string, path: string): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return new UsageError(`${flag} ${path}: no such file`);
  if (code === 'EISDIR') return new UsageError(`${flag} ${path}: is a directory, not a file`);
  if (code === 'EACCES' || code === 'EPERM') {
    return new UsageError(`${flag} ${path}: not allowed to read it (check its permissions)`);
  }
  if (typeof code === 'string') return new UsageError(`${flag} ${path}: cannot be read (${code})`);
  return error;
}

/**
 * A `--file` send that failed after its file was stored: the failure, and the upload's answer (a
 * video's `ticket_id`, an image's `url`, an audio file's values) to send the file without a new upload.
 */
export class AfterUploadError extends Error {
  override name = 'AfterUploadError';
  readonly upload: unknown;

  constructor(upload: unknown, cause: unknown) {
    super('the send failed after the upload', { cause });
    this.upload = upload;
  }
}

/**
 * The exit code for a failure. The SDK's validation and configuration errors are usage errors: the SDK
 * refused them before anything was sent. Everything else (an API answer, the network, a timeout, an
 * unexpected error) is a failure.
 */
export function exitCodeOf(error: unknown): number {
  if (error instanceof AfterUploadError || error instanceof HintedError) return exitCodeOf(error.cause);
  if (error instanceof UsageError) return EXIT.usage;
  if (isOAError(error) && (error.name === 'OAValidationError' || error.name === 'OAConfigError')) {
    return EXIT.usage;
  }
  return EXIT.failed;
}

/**
 * A server that could not listen, explained in flags: a busy or forbidden port is the user's to change
 * (exit 2), not a failure of the API.
 */
export function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new UsageError(
      `${where} is already in use (is another server running?): choose another --port, or --port 0 for any free port`,
    );
  }
  if (code === 'EACCES')
    return new UsageError(`${where} needs privileges to listen on: choose a --port above 1023`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new UsageError(`--host ${host} is not an address of this machine`);
  }
  return error;
}
