/**
 * zod's English words (`zod/locales`' `en`), for the issues the SDK's schemas can raise. The locale
 * module words every string format zod has (emails, IPs, ISO dates...), which the SDK's schemas never
 * check (their only string format is a regex), and it reaches zod's helpers through the core's whole
 * util namespace; this copy keeps a Worker bundle about 0.5 KB gzipped smaller. A test holds it to
 * the locale's words for every kind of issue those schemas can raise, so that a zod update that
 * rewords them is noticed.
 */
import type * as z from 'zod/mini';

type RawIssue = z.core.$ZodRawIssue;

/** The units of a size limit, by the origin of the value measured. */
const SIZABLE: Readonly<Record<string, string>> = {
  string: 'characters',
  file: 'bytes',
  array: 'items',
  set: 'items',
  map: 'entries',
};

/** zod's `util.stringifyPrimitive`. */
const primitive = (value: unknown): string =>
  typeof value === 'bigint' ? `${value}n` : typeof value === 'string' ? `"${value}"` : `${value}`;

/** zod's `util.joinValues`. */
const joined = (values: readonly unknown[], separator: string): string =>
  values.map(primitive).join(separator);

/** zod's `util.parsedType`: what a value is, as the locale names it. */
function parsedType(data: unknown): string {
  const type = typeof data;
  if (type === 'number') return Number.isNaN(data) ? 'nan' : 'number';
  if (type === 'object') {
    if (data === null) return 'null';
    if (Array.isArray(data)) return 'array';
    const object = data as { constructor?: { name: string } };
    if (Object.getPrototypeOf(object) !== Object.prototype && 'constructor' in object && object.constructor) {
      return object.constructor.name;
    }
  }
  return type;
}

/** The locale's type name: `NaN` for `nan`, an infinite number as itself. */
function typeName(type: string, input?: unknown): string {
  if (type === 'number' && typeof input === 'number' && !Number.isFinite(input)) return String(input);
  return type === 'nan' ? 'NaN' : type;
}

/**
 * The message zod's English locale gives `issue`, for the kinds the SDK's schemas can raise; any other
 * kind (a multiple, a prefix, a record's key, a set's element: no SDK schema checks one) gets
 * `Invalid input`.
 */
export function zodEnglish(issue: RawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `Invalid input: expected ${typeName(issue.expected)}, received ${typeName(parsedType(issue.input), issue.input)}`;
    case 'invalid_value':
      if (issue.values.length === 1) return `Invalid input: expected ${primitive(issue.values[0])}`;
      return `Invalid option: expected one of ${joined(issue.values, '|')}`;
    case 'too_big': {
      const adj = issue.exact ? 'exactly ' : issue.inclusive ? '<=' : '<';
      const unit = SIZABLE[issue.origin];
      const origin = issue.origin ?? 'value';
      return unit
        ? `Too big: expected ${origin} to have ${adj}${issue.maximum.toString()} ${unit}`
        : `Too big: expected ${origin} to be ${adj}${issue.maximum.toString()}`;
    }
    case 'too_small': {
      const adj = issue.exact ? 'exactly ' : issue.inclusive ? '>=' : '>';
      const unit = SIZABLE[issue.origin];
      return unit
        ? `Too small: expected ${issue.origin} to have ${adj}${issue.minimum.toString()} ${unit}`
        : `Too small: expected ${issue.origin} to be ${adj}${issue.minimum.toString()}`;
    }
    case 'invalid_format': {
      const format = issue as RawIssue & { pattern?: string };
      if (format.format === 'regex') return `Invalid string: must match pattern ${format.pattern}`;
      // The locale's names of the other formats: none of them is checked by the SDK's schemas.
      return `Invalid ${format.format === 'template_literal' ? 'input' : format.format}`;
    }
    case 'unrecognized_keys':
      return `Unrecognized key${issue.keys.length > 1 ? 's' : ''}: ${joined(issue.keys, ', ')}`;
    case 'invalid_union': {
      const { options } = issue as { options?: unknown };
      if (options && Array.isArray(options) && options.length > 0) {
        return `Invalid discriminator value. Expected ${options.map((o) => `'${o}'`).join(' | ')}`;
      }
      return issue.inclusive === false ? 'Invalid input: more than one option matched' : 'Invalid input';
    }
    default:
      return 'Invalid input';
  }
}
