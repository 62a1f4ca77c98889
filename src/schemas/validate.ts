import type * as z from 'zod/mini';
import { OAValidationError, type OAValidationIssue } from '../errors.js';
import { IN_WORDS, ZOD_WORDS } from './messages.js';

/** Turns zod's issues into the SDK's: a path and a sentence, never the offending value itself. */
export function toIssues(error: z.core.$ZodError): OAValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
    message: issue.message,
  }));
}

/**
 * What a person calls the elements of the request's list fields: `items[0]` is item 1. Other paths
 * (into a received webhook event) are left as code spells them.
 */
const ELEMENT: Readonly<Record<string, string>> = { items: 'item', user_ids: 'user_id' };

/**
 * Where an issue lies: the path as code spells it (0-based, as in `issues[].path`), then the element
 * counted from 1 as a person counts: `items[0].link (item 1)`, `user_ids[2] (user_id 3)`. A path that
 * starts with an index is an entry of a list (`addMany`'s): `entry 1: params.msg`.
 */
function placeOf(path: readonly (string | number)[]): string {
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const inner = placeOf(rest);
    return inner ? `entry ${head + 1}: ${inner}` : `entry ${head + 1}`;
  }
  let where = '';
  let counted = '';
  path.forEach((part, i) => {
    if (typeof part !== 'number') {
      where = where ? `${where}.${part}` : part;
      return;
    }
    where = `${where}[${part}]`;
    const list = path[i - 1];
    const element = typeof list === 'string' ? ELEMENT[list] : undefined;
    if (!counted && element) counted = ` (${element} ${part + 1})`;
  });
  return `${where}${counted}`;
}

/** `items[2].link (item 3): must be a URL (http or https)`, for each issue (the first `limit`). */
export function formatIssues(issues: OAValidationIssue[], limit = 5): string {
  const lines = issues.slice(0, limit).map((issue) => {
    const where = placeOf(issue.path);
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  if (issues.length > limit) lines.push(`... and ${issues.length - limit} more`);
  return lines.join('; ');
}

/**
 * Checks `value` against `schema` and returns the parsed value, or throws an {@link OAValidationError}
 * whose message names `what` and every problem found: the field, the rule, what to do.
 */
export function validate<S extends z.ZodMiniType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalid(schema, value, what);
}

/**
 * The {@link OAValidationError} for `value`, which failed `schema`: parsed again for the SDK's wording
 * (a parse given options skips zod's fast path, about 1.3 µs more per call, so a check parses without
 * them and comes here only on failure).
 * A caller's own check reaches here only on failure.
 */
export function invalid(schema: z.ZodMiniType, value: unknown, what: string): OAValidationError {
  const { error } = schema.safeParse(value, IN_WORDS);
  const issues = error ? toIssues(error) : [];
  return new OAValidationError(`Invalid ${what}: ${formatIssues(issues)}`, issues);
}

/**
 * The issues of `value`, which failed `schema`, in zod's own words: parsed again for them, as
 * {@link invalid} does for the SDK's, so that a parse that passes costs no words.
 */
export function zodIssues(schema: z.ZodMiniType, value: unknown): OAValidationIssue[] {
  const { error } = schema.safeParse(value, ZOD_WORDS);
  return error ? toIssues(error) : [];
}
