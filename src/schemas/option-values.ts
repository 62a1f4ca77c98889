/**
 * Values of the client's options that both their checks (client-options.ts) and the code that uses
 * them (core/logger.ts, core/redact.ts) need: plain constants, no schema, so that importing them brings
 * no zod into a bundle.
 */

/** How much a logger receives: a level and the ones above it, or nothing (`off`). */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

/** What `logLevel` takes, lowest first: a level and the ones above it reach the logger, or nothing. */
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'off'];

/**
 * The shortest api secret the client takes, and the shortest text the SDK removes wherever it appears
 * (core/redact.ts): a shorter one would blank out ordinary words and the fields an error is read from
 * (`code`, `statusCode`), so the one configured secret is always removed.
 */
export const MIN_SECRET_LENGTH = 6;
