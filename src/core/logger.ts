import { LOG_LEVELS, type LogLevel } from '../schemas/option-values.js';

export type { LogLevel };

/**
 * Where the SDK reports what it does: requests, retries, token renewals. Any of the four methods may be
 * left out; `console` fits. The SDK never passes a secret (key secret, token, auth header) to it.
 */
export interface Logger {
  /** Each request and answer. */
  debug?: ((message: string, details?: Record<string, unknown>) => void) | undefined;
  /** Token renewals, transcode waits. */
  info?: ((message: string, details?: Record<string, unknown>) => void) | undefined;
  /** Retries, and what the SDK had to work around. */
  warn?: ((message: string, details?: Record<string, unknown>) => void) | undefined;
  /** Failures the SDK could not report otherwise. */
  error?: ((message: string, details?: Record<string, unknown>) => void) | undefined;
}

/** The default: silent. */
export const silentLogger: Logger = {};

/** The levels a logger is called at, lowest first (`logLevel` also takes `off`). */
const LEVELS = LOG_LEVELS.filter((level) => level !== 'off') as readonly Exclude<LogLevel, 'off'>[];

const isLevel = (value: unknown): value is LogLevel => (LOG_LEVELS as readonly unknown[]).includes(value);

/** A process warning where the runtime has them (Node, Bun, Deno), else the console's. */
function warn(message: string): void {
  const proc = globalThis.process;
  if (typeof proc?.emitWarning === 'function') proc.emitWarning(message, 'OALogWarning');
  else console.warn(`OALogWarning: ${message}`);
}

/**
 * The logger a client uses: the caller's (else `console` when a level is asked for), keeping the
 * methods at `level` and above. The level comes from the `logLevel` option, else `OA_LOG` (as
 * `OPENAI_LOG` does for openai); an `OA_LOG` it does not know is reported once and ignored.
 */
export function loggerFor(
  logger: Logger | undefined,
  logLevel: LogLevel | undefined,
  env: Record<string, string | undefined> = globalThis.process?.env ?? {},
): Logger {
  let level = logLevel;
  const fromEnv = env.OA_LOG?.trim().toLowerCase();
  if (level === undefined && fromEnv) {
    if (isLevel(fromEnv)) level = fromEnv;
    else warn(`OA_LOG=${fromEnv} is not one of ${LOG_LEVELS.join(', ')}: ignored`);
  }
  if (level === 'off' || (level === undefined && !logger)) return silentLogger;
  const target = logger ?? console;
  if (level === undefined) return containLogger(target);
  const kept: Logger = {};
  for (const name of LEVELS.slice(LEVELS.indexOf(level))) {
    const method = target[name];
    if (typeof method === 'function') kept[name] = method.bind(target);
  }
  return containLogger(kept);
}

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
      // Where there is no `process` (a Worker without Node compatibility), nothing is left to tell.
      try {
        globalThis.process?.emitWarning?.(
          `oa-messaging: the logger's ${level}() threw (${error instanceof Error ? error.message : String(error)}); ` +
            'its lines are dropped, the calls go on',
          'OALoggerWarning',
        );
      } catch {}
    };
    contained[level] = (message, details) => {
      try {
        // A line without details is the message alone: `console` would print a stray `undefined`.
        const returned: unknown =
          details === undefined ? method.call(logger, message) : method.call(logger, message, details);
        // An async logger's rejection is contained as well.
        if (returned instanceof Promise) returned.catch(report);
      } catch (error) {
        report(error);
      }
    };
  }
  return contained;
}
