/** The one place a command's failure becomes a report and an exit code. */
import { type Command, CommanderError } from 'commander';
import { ExitError, exitCodeOf } from './errors.js';
import { Output } from './output.js';

/**
 * Runs a command's work with its {@link Output}. A failure is reported (as JSON with `--json`) and ends
 * the run with its exit code; a usage error of commander's own passes through to the parser's handling.
 */
export async function runAction(command: Command, work: (out: Output) => Promise<void>): Promise<void> {
  const out = new Output(command.opts().json === true);
  try {
    await work(out);
  } catch (error) {
    if (error instanceof CommanderError) throw error;
    out.failure(error);
    throw new ExitError(exitCodeOf(error));
  }
}
