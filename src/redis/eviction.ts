/**
 * The one check of how a Redis treats keys under memory pressure: this SDK keeps there what must not
 * vanish (token pairs, locks, rate-limit slots, claims, queued jobs), so a Redis that evicts keys is
 * worth one warning.
 */
import { sleep } from '../core/call-control.js';
import type { IORedis } from './client.js';
import { whenReady } from './reach.js';

/** How long the check may take; past it (or on any failure) nothing is said. */
const CHECK_MS = 2_000;

/**
 * The first `maxmemory-policy` of `client` (of each master, on a Cluster) other than `noeviction`, or
 * `undefined` when none evicts or the check could not be made (`INFO memory` refused or unanswered:
 * managed Redis rename `CONFIG`, not `INFO`).
 */
export async function evictionPolicy(client: IORedis): Promise<string | undefined> {
  // Once connected (a Cluster's nodes, asked before, would delay the first calls by a retry).
  const ready = await whenReady(client, CHECK_MS).then(
    () => true,
    () => false,
  );
  if (!ready) return undefined;
  const nodes =
    client.isCluster === true && typeof client.nodes === 'function' ? client.nodes('master') : [client];
  const late = sleep(CHECK_MS, undefined, 'the eviction check');
  try {
    const infos = await Promise.race([
      Promise.all(nodes.map((node) => node.info('memory'))),
      late.done.then(() => undefined),
    ]);
    for (const info of infos ?? []) {
      const policy = /^maxmemory_policy:(\S+)/m.exec(String(info))?.[1];
      if (policy !== undefined && policy !== 'noeviction') return policy;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    late.wake();
  }
}

/** The warning about a Redis that evicts keys, naming the feature that uses it. */
export function evictionWarning(feature: string, policy: string): string {
  return (
    `oa-messaging: the Redis of the ${feature} evicts keys under memory pressure (maxmemory-policy ${policy}): ` +
    'what it keeps there (tokens, locks, claims, queued jobs) may vanish; set maxmemory-policy noeviction'
  );
}
