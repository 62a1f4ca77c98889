/**
 * The one way every entry point checks its options (`new OAClient`, `createBot`, `createOutbox`,
 * `createInbox`, the webhook handlers, `oa-messaging/redis`): a zod/mini object of rules, one per
 * option, parsed once before anything is opened or sent; a bad option is an `OAConfigError` that names
 * the entry point, the option and what was given. The options' TSDoc and `@default` stay on their
 * interfaces; the rules only say what passes.
 */
import * as z from 'zod/mini';
import { OAConfigError } from '../errors.js';
import { kindOf } from './messages.js';

/**
 * A rule of one option: `ok` says whether a value other than `undefined` passes. An `error` that
 * starts with `must` is said of the option: the message puts the option's name before it and what was
 * given after it (`createBot: sessionTtlMs must be a positive number, got -1`). Any other `error` is a
 * whole sentence and stands as written.
 */
export const checked = (ok: (value: unknown) => boolean, error: string) =>
  z.optional(z.unknown().check(z.refine((value) => value === undefined || ok(value), { error })));

/** A rule whose message depends on the value: `problem` gives it, or `undefined` when the value passes. */
export const judged = (problem: (value: unknown) => string | undefined) =>
  z.optional(
    z.unknown().check(
      z.superRefine((value, ctx) => {
        const message = value === undefined ? undefined : problem(value);
        if (message !== undefined) ctx.addIssue({ code: 'custom', message });
      }),
    ),
  );

/**
 * A string of at least `min` characters (a secret): the message says how many characters the given
 * string has, never what it holds (`webhookSecret must be a string of at least 16 characters, got a
 * string of 11 characters`); a value that is no string is named as for any other rule.
 */
export const aStringOfAtLeast = (min: number) =>
  z.optional(
    z.unknown().check(
      z.superRefine((value, ctx) => {
        if (value === undefined || (typeof value === 'string' && value.length >= min)) return;
        const issue = { code: 'custom' as const, message: `must be a string of at least ${min} characters` };
        if (typeof value !== 'string') return ctx.addIssue(issue);
        const length = `${value.length} character${value.length === 1 ? '' : 's'}`;
        ctx.addIssue({ ...issue, params: { given: `a string of ${length}` } });
      }),
    ),
  );

/** A rule of an option that must be given: `ok` sees `undefined` too. */
export const required = (ok: (value: unknown) => boolean, error: string) =>
  z.unknown().check(z.refine(ok, { error }));

/** The options of one entry point: `needs` is the sentence for options that are not an object at all. */
export const optionsOf = <Shape extends z.core.$ZodLooseShape>(shape: Shape, needs: string) =>
  z.looseObject(shape, { error: needs });

export const isNumber = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

/** A number above 0: a size, a count, a time in ms (`what` says which). */
export const positive = (what = 'a positive number') =>
  checked((v) => isNumber(v) && v > 0, `must be ${what}`);

/** A number of 1 or more (rounded up where it is used). */
export const atLeastOne = /* @__PURE__ */ checked(
  (v) => isNumber(v) && v >= 1,
  'must be a number, 1 or more',
);

/** A whole number above 0. */
export const positiveInteger = /* @__PURE__ */ checked(
  (v) => Number.isInteger(v) && (v as number) > 0,
  'must be a positive integer',
);

/** A function (a callback, a handler). */
export const aFunction = /* @__PURE__ */ checked((v) => typeof v === 'function', 'must be a function');

/** A string (a prefix, a name). */
export const aString = /* @__PURE__ */ checked((v) => typeof v === 'string', 'must be a string');

/** One of `values`: `must be 'none' or 'sender'`. */
export const oneOf = (values: readonly string[]) =>
  checked(
    (v) => values.includes(v as string),
    `must be ${values.map((value) => `'${value}'`).join(values.length > 2 ? ', ' : ' or ')}`,
  );

/** A logger: an object whose `debug`, `info`, `warn` and `error`, where present, are functions. */
export const aLogger = /* @__PURE__ */ checked(
  (v) =>
    isObject(v) &&
    (['debug', 'info', 'warn', 'error'] as const).every(
      (level) => v[level] === undefined || typeof v[level] === 'function',
    ),
  'must be a logger such as console',
);

/** What was given: a number or a boolean as it is, anything else by its kind (a string may be a secret). */
const given = (value: unknown): string =>
  typeof value === 'number' || typeof value === 'boolean' ? String(value) : kindOf(value);

/**
 * Checks `options` against `schema` (made with {@link optionsOf} or `z.looseObject`) and returns them;
 * throws an `OAConfigError` with every problem, each rule's line after `where` (the entry point, as a
 * caller writes it: `createBot`, `outbox.work`).
 */
export function checkConfig<T>(schema: z.ZodMiniType, options: T, where?: string): T {
  const result = schema.safeParse(options);
  if (result.success) return options;
  const lines = result.error.issues.map((issue) => {
    if (issue.path.length === 0) return issue.message;
    if (!issue.message.startsWith('must')) {
      // zod's own checks (a type) speak in the app's zod locale: the option's name goes before it.
      if (issue.code === 'custom') return issue.message;
      const line = `${issue.path.map(String).join('.')}: ${issue.message}`;
      return where ? `${where}: ${line}` : line;
    }
    const name = issue.path.map(String).join('.');
    let value: unknown = options;
    for (const key of issue.path) value = isObject(value) ? value[key as string] : undefined;
    // A rule may say itself what was given (aStringOfAtLeast: a length, never the text).
    const said =
      issue.code === 'custom' && typeof issue.params?.given === 'string' ? issue.params.given : undefined;
    const line = `${name} ${issue.message}, got ${said ?? given(value)}`;
    return where ? `${where}: ${line}` : line;
  });
  throw new OAConfigError(lines.join('; '));
}
