/** Lua scripts run from Redis's script cache: EVALSHA, and EVAL only when Redis does not have it. */
import { createHash } from 'node:crypto';
import type { RedisClient } from './client.js';

/** A Lua script and its SHA-1, so that Redis runs it from its script cache after the first call. */
export interface Script {
  source: string;
  sha1: string;
}

/** `source` as a {@link Script}, its SHA-1 computed once. */
export function script(source: string): Script {
  return { source, sha1: createHash('sha1').update(source).digest('hex') };
}

/**
 * Runs `script` with `keys` and `args` by its SHA-1; sends the source only when Redis answers NOSCRIPT
 * (its cache is empty after a restart, a failover or SCRIPT FLUSH). `answer` wraps each command, e.g.
 * to bound how long it may take.
 */
export async function runScript(
  client: RedisClient,
  script: Script,
  keys: readonly string[],
  args: readonly (string | number)[],
  answer: (command: Promise<unknown>) => Promise<unknown> = (command) => command,
): Promise<unknown> {
  try {
    return await answer(client.evalsha(script.sha1, keys.length, ...keys, ...args));
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('NOSCRIPT')) throw error;
    return await answer(client.eval(script.source, keys.length, ...keys, ...args));
  }
}
