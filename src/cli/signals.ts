/** How the long-running commands (`mock-server`, `webhook listen`) learn that it is time to stop. */

/** Resolves with the first SIGINT or SIGTERM; until then those signals no longer end the process. */
export function untilSignalled(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
