/** How the long-running commands (`mock-server`, `webhook listen`) learn that it is time to stop. */

/** How often a command started through npm checks that npm is still there. */
const PARENT_CHECK_MS = 500;

/**
 * Resolves with the first SIGINT or SIGTERM; until then those signals no longer end the process.
 *
 * Started through npm (`npx oa mock-server`, `npm run mock-server`), the command runs under a shell
 * that npm spawned: killing npm's PID stops npm and that shell, but the signal never reaches the
 * command, which would keep its port. So there it also stops once its parent is gone (it has been
 * handed to another parent): `kill $!` after `npx oa mock-server &` ends the server.
 */
export function untilSignalled(): Promise<NodeJS.Signals | 'parent-exited'> {
  return new Promise((resolve) => {
    let watch: NodeJS.Timeout | undefined;
    const stop = (reason: NodeJS.Signals | 'parent-exited') => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      clearInterval(watch);
      resolve(reason);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    if (process.env.npm_command !== undefined) {
      const parent = process.ppid;
      watch = setInterval(() => {
        if (process.ppid !== parent) stop('parent-exited');
      }, PARENT_CHECK_MS);
    }
  });
}
