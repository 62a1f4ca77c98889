/** The SDK client of a command, configured from its flags, the environment and `.env`. */
import { OAClient, type OAClientOptions, type RetryReason } from '../index.js';
import { type ConnectionFlags, resolveConnection } from './config.js';
import type { Output } from './output.js';

/** The flags of {@link withConnectionOptions}. */
export interface ClientFlags extends ConnectionFlags {
  timeout?: number;
  json?: boolean;
}

/**
 * A client for the command's settings. The secret is registered with `out` first, so that no line
 * `oa` prints can carry it, whatever fails next.
 */
export function createClient(
  flags: ClientFlags,
  out: Output,
  extra: Partial<OAClientOptions> = {},
): OAClient {
  const settings = resolveConnection(flags);
  out.addSecret(settings.apiSecret);
  return new OAClient({
    ...extra,
    ...settings,
    ...(flags.timeout === undefined ? {} : { timeoutMs: flags.timeout }),
  });
}

const RETRY_REASONS: Record<RetryReason, string> = {
  rate_limited: 'rate limited (429)',
  job_busy: 'a broadcast job is running (JOB_BUSY)',
  not_sent: 'the connection failed before the request left',
  unauthorized: 'the access token was renewed',
  outcome_unknown: 'no usable answer',
  video_converting: 'the video is still converting',
};

/**
 * Runs `work` with a client and closes the client after it, so that `oa` ends as soon as it is done.
 * `extra`: client options of the command's own (e.g. `oa outbox work`'s Redis coordination).
 */
export async function withClient<T>(
  flags: ClientFlags,
  out: Output,
  work: (client: OAClient) => Promise<T>,
  extra: Partial<OAClientOptions> = {},
): Promise<T> {
  const client = createClient(flags, out, extra);
  client.on('retry', (event) => {
    // The transcode wait has a display of its own; other waits (429, a running broadcast job) would
    // otherwise look like a hang.
    if (event.reason === 'video_converting') return;
    const seconds = (event.waitMs / 1000).toFixed(1);
    out.notice(`oa: ${event.endpoint}: ${RETRY_REASONS[event.reason]}; trying again in ${seconds} s`);
  });
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}
