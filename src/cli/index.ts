/**
 * The `oa` command. Built on the SDK's public entry points only, like any program that uses it; the
 * library never imports this file.
 */
import { main } from './program.js';

// A reader that stops early (`oa --help | head`) closes the pipe: that ends the output, not in a crash.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

const code = await main(process.argv);
process.exitCode = code;
// Everything `oa` opens is closed by now. Should a socket linger (a peer that never closes), end anyway
// soon after: a command line tool that hangs after its work is done is worse than one cut short.
setTimeout(() => process.exit(code), 2_000).unref();
