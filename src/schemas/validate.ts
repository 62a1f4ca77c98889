import type { z } from 'zod';
import { OAValidationError, type OAValidationIssue } from '../errors.js';

/** Turns zod's issues into the SDK's: a path and a sentence, never the offending value itself. */
export function toIssues(error: z.ZodError): OAValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map((part) => (typeof part === 'symbol' ? String(part) : part)),
    message: issue.message,
  }));
}

/** `items[2].link: Invalid URL` */
export function formatIssues(issues: OAValidationIssue[], limit = 5): string {
  const lines = issues.slice(0, limit).map((issue) => {
    const where = issue.path.reduce<string>(
      (acc, part) => (typeof part === 'number' ? `${acc}[${part}]` : acc ? `${acc}.${part}` : part),
      '',
    );
    return where ? `${where}: ${issue.message}` : issue.message;
  });
  if (issues.length > limit) lines.push(`... and ${issues.length - limit} more`);
  return lines.join('; ');
}

/**
 * Checks `value` against `schema` and returns the parsed value, or throws an {@link OAValidationError}
 * whose message names `what` and every problem found.
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalid(result.error, what);
}

/** The {@link OAValidationError} for a failed `safeParse` of `what`: a caller's own check reaches here only on failure. */
export function invalid(error: z.ZodError, what: string): OAValidationError {
  const issues = toIssues(error);
  return new OAValidationError(`Invalid ${what}: ${formatIssues(issues)}`, issues);
}
