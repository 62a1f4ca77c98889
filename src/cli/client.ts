/** The SDK client of a command, configured from its flags, the environment and `.env`. */
import { isOAError, OAClient, type OAClientOptions, type RetryReason } from '../index.js';
import { type ConnectionFlags, resolveConnection } from './config.js';
import { UsageError } from './errors.js';
import type { Output } from './output.js';
import { FileTokenStore } from './token-cache.js';

/** The flags of {@link withConnectionOptions}. */
export interface ClientFlags extends ConnectionFlags {
  timeout?: number;
  uploadTimeout?: number;
  maxRetries?: number;
  maxBusyWait?: number;
  /** `false` with `--no-rate-limit`. */
  rateLimit?: boolean;
  allowInsecureHttp?: boolean;
  header?: Record<string, string>;
  json?: boolean;
}

/** Each client option a configuration error may name, and how `oa` takes it. */
const FLAG_OF_OPTION: readonly [RegExp, string][] = [
  [/pass \{ allowInsecureHttp: true \}/g, 'pass --allow-insecure-http (or set OA_ALLOW_INSECURE_HTTP=1)'],
  [/\bbaseUrl( \(OA_BASE_URL\))?/g, '--base-url'],
  [/\bapiKey \(OA_API_KEY\)|\bapiKey\b/g, '--api-key (or OA_API_KEY)'],
  [/\bapiSecret \(OA_API_SECRET\)|\bapiSecret\b/g, '--api-secret (or OA_API_SECRET)'],
  [/\buploadTimeoutMs\b/g, '--upload-timeout'],
  [/\btimeoutMs\b/g, '--timeout'],
  [/\bmaxRetries\b/g, '--max-retries'],
  [/\bmaxBusyWaitMs\b/g, '--max-busy-wait'],
  [/\bdefaultHeaders\b/g, '--header'],
];

/** A configuration error of the SDK, told in the flags and variables of `oa`. */
function inFlags(message: string): string {
  return FLAG_OF_OPTION.reduce((text, [pattern, flag]) => text.replace(pattern, flag), message);
}

const truthy = (value: string | undefined) => value !== undefined && /^(1|true|yes)$/i.test(value);

/**
 * A client for the command's settings. The secret is registered with `out` first, so that no line
 * `oa` prints can carry it, whatever fails next.
 */
function createClient(flags: ClientFlags, out: Output, extra: Partial<OAClientOptions> = {}): OAClient {
  const settings = resolveConnection(flags);
  out.addSecret(settings.apiSecret);
  // The pair of the last command is used again, so that a shell loop does not log in each time.
  const options: OAClientOptions = {
    tokenStore: new FileTokenStore(settings.baseUrl, {
      apiSecret: settings.apiSecret,
      warn: (line) => out.notice(line),
    }),
    ...extra,
    ...settings,
  };
  if (flags.timeout !== undefined) options.timeoutMs = flags.timeout;
  if (flags.uploadTimeout !== undefined) options.uploadTimeoutMs = flags.uploadTimeout;
  if (flags.maxRetries !== undefined) options.maxRetries = flags.maxRetries;
  if (flags.maxBusyWait !== undefined) options.maxBusyWaitMs = flags.maxBusyWait;
  if (flags.rateLimit === false) options.rateLimit = false;
  if (flags.allowInsecureHttp || truthy(process.env.OA_ALLOW_INSECURE_HTTP)) options.allowInsecureHttp = true;
  if (flags.header !== undefined) options.defaultHeaders = flags.header;
  try {
    return new OAClient(options);
  } catch (error) {
    // The SDK speaks of its options; the user typed flags.
    if (isOAError(error) && error.name === 'OAConfigError') throw new UsageError(inFlags(error.message));
    throw error;
  }
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
