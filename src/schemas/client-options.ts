/**
 * `new OAClient(options)`'s options, checked once at construction (each call's options are checked
 * by the schemas in `requests.ts`, only when given). Every message names the option and what it
 * takes; the values themselves stay out of them.
 */
import * as z from 'zod/mini';
import { HOOKS_RULE, isHooks } from './hooks.js';
import { aLogger, checked, isNumber, isObject } from './option-checks.js';
import { LOG_LEVELS, MIN_SECRET_LENGTH } from './option-values.js';
import { MAX_TIMEOUT_MS } from './requests.js';

/** A time in ms a Node timer can wait: at most 2^31-1 (a longer one fires after 1 ms). */
export const ms = (least: 'from 0' | 'above 0') =>
  checked(
    (v) => isNumber(v) && (least === 'from 0' ? v >= 0 : v > 0) && v <= MAX_TIMEOUT_MS,
    `must be a number of ms ${least} to ${MAX_TIMEOUT_MS} (the longest a Node timer waits)`,
  );

const isWindow = (v: unknown) => {
  if (v === undefined) return true;
  const { max, windowMs } = (v ?? {}) as { max?: unknown; windowMs?: unknown };
  return Number.isInteger(max) && (max as number) >= 1 && isNumber(windowMs) && windowMs > 0;
};

/** Headers the SDK sets itself: a default header must not replace them. */
const OWNED = new Set(['authorization', 'content-type', 'content-length', 'accept', 'host', 'user-agent']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const APP_NAME = /^[\w.-]+$/;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Refuses default headers that are not valid HTTP, or that would replace one the SDK owns. */
const DefaultHeadersSchema = z.optional(
  z.unknown().check(
    z.superRefine((headers, ctx) => {
      if (headers === undefined) return;
      if (!isObject(headers))
        return void ctx.addIssue({ code: 'custom', message: 'defaultHeaders must be an object' });
      for (const [name, value] of Object.entries(headers)) {
        const owned = OWNED.has(name.toLowerCase());
        const message = !TOKEN.test(name)
          ? `defaultHeaders: ${JSON.stringify(name)} is not a header name`
          : owned
            ? `defaultHeaders: ${name} is set by the SDK${name.toLowerCase() === 'user-agent' ? ' (use appInfo to name your application)' : ''}`
            : typeof value !== 'string' || /[\r\n\0]/.test(value)
              ? `defaultHeaders: the value of ${name} must be a string on one line`
              : undefined;
        if (message) ctx.addIssue({ code: 'custom', message });
      }
    }),
  ),
);

/**
 * The client's options with `baseUrl`, `apiKey` and `apiSecret` already filled in from the
 * environment. Checks what a client cannot work safely without; the defaults are filled in after.
 */
export const OAClientOptionsSchema = z
  .looseObject({
    // zod's own type checks: their messages follow the app's zod locale (`z.config`), and never repeat
    // the value.
    baseUrl: z.optional(z.string()),
    apiKey: z.optional(z.string()),
    apiSecret: z.optional(z.string()),
    timeoutMs: ms('above 0'),
    uploadTimeoutMs: ms('above 0'),
    maxRetries: checked(
      (v) => isNumber(v) && v >= 0 && v <= Number.MAX_SAFE_INTEGER,
      'must be a whole number from 0',
    ),
    maxBusyWaitMs: ms('from 0'),
    credentialsTimeoutMs: ms('above 0'),
    refreshBeforeExpiryMs: ms('from 0'),
    rateLimit: z.optional(
      z.pipe(
        checked((v) => v === false || isObject(v), 'must be an object or false'),
        z.unknown().check(
          z.superRefine((v, ctx) => {
            if (!isObject(v)) return;
            for (const name of ['general', 'upload'] as const) {
              if (!isWindow(v[name])) {
                ctx.addIssue({
                  code: 'custom',
                  path: [name],
                  message: 'must be { max: a positive integer, windowMs: a positive number }',
                });
              }
            }
          }),
        ),
      ),
    ),
    reuseUploads: checked(
      (v) =>
        typeof v === 'boolean' ||
        (isObject(v) &&
          (v.ttlMs === undefined ||
            (isNumber(v.ttlMs) && v.ttlMs > 0 && v.ttlMs <= Number.MAX_SAFE_INTEGER))),
      'must be true, false or { ttlMs: a number of ms above 0 }',
    ),
    videoProbeUserId: checked(
      (v) => typeof v === 'string' && v.trim() !== '',
      'must be a user_id (a non-empty string)',
    ),
    logger: aLogger,
    logLevel: checked(
      (v) => (LOG_LEVELS as readonly unknown[]).includes(v),
      `must be one of ${LOG_LEVELS.join(', ')}`,
    ),
    defaultHeaders: DefaultHeadersSchema,
    fetch: checked((v) => typeof v === 'function', 'must be a function (a fetch implementation)'),
    hooks: checked(isHooks, HOOKS_RULE),
    appInfo: checked(
      (v) => isObject(v) && typeof v.name === 'string' && APP_NAME.test(v.name),
      'appInfo.name must be letters, digits, ".", "-" or "_"',
    ),
  })
  .check(
    z.superRefine(
      (options, ctx) => {
        const { baseUrl, apiKey, apiSecret } = options as {
          baseUrl?: unknown;
          apiKey?: unknown;
          apiSecret?: unknown;
        };
        // Every missing setting at once: a first run should not need three tries to learn what it needs.
        const missing = [
          baseUrl ? undefined : 'baseUrl (OA_BASE_URL)',
          apiKey ? undefined : 'apiKey (OA_API_KEY)',
          apiSecret ? undefined : 'apiSecret (OA_API_SECRET)',
        ].filter((name) => name !== undefined);
        if (missing.length > 0) {
          ctx.addIssue({
            code: 'custom',
            message: `Missing ${missing.join(', ')}: pass them to new OAClient({ ... }) or set the environment variables`,
          });
          return;
        }
        if (typeof apiSecret === 'string' && apiSecret.length < MIN_SECRET_LENGTH) {
          ctx.addIssue({
            code: 'custom',
            message:
              `apiSecret (OA_API_SECRET) must be at least ${MIN_SECRET_LENGTH} characters: a shorter one ` +
              'could not be kept out of error messages and log lines without mangling them',
          });
        }
        if (options.fetch !== undefined && options.dispatcher !== undefined) {
          ctx.addIssue({
            code: 'custom',
            message:
              'dispatcher and fetch cannot be given together: a dispatcher is for undici, fetch replaces it',
          });
        }
        if (typeof baseUrl === 'string') {
          const problem = baseUrlProblem(baseUrl, Boolean(options.allowInsecureHttp));
          if (problem) ctx.addIssue({ code: 'custom', message: problem });
        }
      },
      // Also when an option above failed: the missing settings are the first thing to tell.
      { when: () => true },
    ),
  );

/**
 * Why `raw` cannot be the base URL, or `undefined` when it can: https, or plain http on loopback or
 * with `allowInsecureHttp`. Also checks the base URL a credentials provider names.
 */
export function baseUrlProblem(raw: string, allowInsecureHttp: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `baseUrl is not a URL: ${raw}`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return `baseUrl must be an https URL, got ${url.protocol}`;
  }
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname) && !allowInsecureHttp) {
    return (
      `baseUrl ${url.origin} is plain http: tokens and the key secret would travel in clear. ` +
      'Use https, or pass { allowInsecureHttp: true } for a trusted network.'
    );
  }
  if (url.search || url.hash) return 'baseUrl must not have a query or a fragment';
  return undefined;
}
