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

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/**
 * The caller's logger, made harmless: a method that throws never affects a call (it may run while the
 * call holds a rate-limit slot). The first throw is reported once, as a process warning.
 */
export function containLogger(logger: Logger): Logger {
  let reported = false;
  const contained: Logger = {};
  for (const level of LEVELS) {
    const method = logger[level];
    if (typeof method !== 'function') continue;
    const report = (error: unknown) => {
      if (reported) return;
      reported = true;
      process.emitWarning(
        `oa-messaging: the logger's ${level}() threw (${error instanceof Error ? error.message : String(error)}); ` +
          'its lines are dropped, the calls go on',
        'OALoggerWarning',
      );
    };
    contained[level] = (message, details) => {
      try {
        const returned: unknown = method.call(logger, message, details);
        // An async logger's rejection is contained as well.
        if (returned instanceof Promise) returned.catch(report);
      } catch (error) {
        report(error);
      }
    };
  }
  return contained;
}
