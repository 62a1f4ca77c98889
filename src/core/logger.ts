/**
 * Where the SDK reports what it does: requests, retries, token renewals. Any of the four methods may be
 * left out; `console` fits. The SDK never passes a secret (key secret, token, auth header) to it.
 */
export interface Logger {
  debug?(message: string, details?: Record<string, unknown>): void;
  info?(message: string, details?: Record<string, unknown>): void;
  warn?(message: string, details?: Record<string, unknown>): void;
  error?(message: string, details?: Record<string, unknown>): void;
}

/** The default: silent. */
export const silentLogger: Logger = {};
