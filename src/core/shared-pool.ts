/**
 * What the clients of `createAccounts` share, made once from its `clientOptions`: the options checked
 * and resolved, the headers, the logger, and one transport whose connection pools (one per origin,
 * capped) every account's client sends through. On Node that is undici (the caller's `dispatcher`, else
 * an Agent of its own); elsewhere the global `fetch` (or the caller's), which pools by itself.
 */
import { MemoryTokenStore } from './auth.js';
import { clientTransport, NO_BASE_URL, type SharedClientParts } from './context.js';
import { loggerFor } from './logger.js';
import { OAStates } from './oa-state.js';
import { type OAClientOptions, requestHeaders, resolveOptions } from './options.js';

/** Stands in for the accounts' credentials while their shared options are checked. */
const noCredentials = () => undefined;

/**
 * The parts every account's client shares. `baseUrl`: the accounts' own (clientOptions or
 * `OA_BASE_URL`), else `undefined` (each account's credentials must then name one).
 */
export function sharedClientParts(
  options: OAClientOptions,
  baseUrl: string | undefined,
  connectionsPerOrigin: number,
): SharedClientParts {
  // Checked as a client's options are, once for every account (a stand-in base URL when none is given).
  const resolved = resolveOptions({
    ...options,
    baseUrl: baseUrl ?? NO_BASE_URL.href,
    credentials: noCredentials,
    account: 'accounts',
  });
  const logger = loggerFor(options.logger, options.logLevel);
  return {
    options,
    resolved,
    baseUrl: baseUrl === undefined ? undefined : resolved.baseUrl,
    headers: requestHeaders(options.appInfo, options.defaultHeaders),
    urls: new Map(),
    logger,
    transport: clientTransport(options, resolved.proxyFromEnv, connectionsPerOrigin),
    // One token store for every OA of the accounts (keyed by OA), unless one is shared already.
    states: new OAStates({
      coordination: options.coordination,
      tokenStore: options.tokenStore ?? new MemoryTokenStore(),
      rateLimit: resolved.rateLimit,
      refreshBeforeExpiryMs: resolved.refreshBeforeExpiryMs,
      logger,
    }),
  };
}
