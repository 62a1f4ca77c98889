/**
 * The words of a validation message, in one style: the rule, then what to do (`required: a URL (http
 * or https)`, `must be at most 170 characters: shorten it`). The field is named by the path, which the
 * message never repeats. Zod's own words (`Invalid input: expected string, received undefined`) are
 * replaced here, per schema or per parse: the user's global zod configuration is never touched.
 */
import * as z from 'zod/mini';
import { zodEnglish } from './zod-english.js';

type RawIssue = z.core.$ZodRawIssue;

/**
 * zod's own words for the issues the SDK does not word itself (`Invalid input: expected number,
 * received string`), as a parse with classic `zod` would give them: the app's own configuration of zod
 * (an error map, a locale) still wins when it has one. Without this, `zod/mini` alone says only
 * `Invalid input`.
 */
const zodWords = (issue: RawIssue): string | undefined => {
  const { customError, localeError } = z.config();
  return customError || localeError ? undefined : zodEnglish(issue);
};

/** `a string`, `an array`, `null`: what a value is, never the value itself. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/**
 * A schema's own message for a value of the wrong type: `required: <what>` when it is missing, else
 * `must be <what>, not a number`. Given as a schema's `error`, it leaves every other issue to the rest.
 */
export function expecting(what: string): (issue: RawIssue) => string | undefined {
  return (issue) => {
    if (issue.code !== 'invalid_type') return undefined;
    return issue.input === undefined ? `required: ${what}` : `must be ${what}, not ${kindOf(issue.input)}`;
  };
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  function: 'a function',
  date: 'a Date',
};

const quoted = (values: readonly unknown[]): string => {
  const each = values.map((value) => (typeof value === 'string' ? `'${value}'` : String(value)));
  return each.length <= 1 ? (each[0] ?? '') : `${each.slice(0, -1).join(', ')} or ${each.at(-1)}`;
};

function sizeRule(issue: RawIssue & { code: 'too_small' | 'too_big' }): string | undefined {
  const small = issue.code === 'too_small';
  const limit = Number(small ? issue.minimum : issue.maximum);
  const inclusive = issue.inclusive !== false;
  if (issue.origin === 'number' || issue.origin === 'int' || issue.origin === 'bigint') {
    if (small) return inclusive ? `must be ${limit} or more` : `must be more than ${limit}`;
    return inclusive ? `must be ${limit} or less` : `must be less than ${limit}`;
  }
  const unit = issue.origin === 'string' ? 'character' : issue.origin === 'array' ? 'entry' : undefined;
  if (unit === undefined) return undefined;
  const units = limit === 1 ? unit : unit === 'entry' ? 'entries' : `${unit}s`;
  if (issue.exact) return `must have exactly ${limit} ${units}`;
  return small ? `must have at least ${limit} ${units}` : `must have at most ${limit} ${units}: shorten it`;
}

/** The fields an object schema takes, for the message that refuses an unknown one. */
function fieldsOf(issue: RawIssue): string[] {
  const shape = (issue.inst as { _zod?: { def?: { shape?: object } } } | undefined)?._zod?.def?.shape;
  return shape ? Object.keys(shape) : [];
}

/** The rule and what to do, for the issues no schema of the SDK words itself; `undefined` for the rest. */
const sdkWords = (issue: RawIssue): string | undefined => {
  switch (issue.code) {
    case 'invalid_type': {
      const what = EXPECTED[issue.expected] ?? issue.expected;
      if (issue.expected === 'int') return 'must be a whole number';
      return issue.input === undefined ? `required: ${what}` : `must be ${what}, not ${kindOf(issue.input)}`;
    }
    case 'too_small':
    case 'too_big':
      return sizeRule(issue);
    case 'unrecognized_keys': {
      const keys = issue.keys.join(', ');
      const fields = fieldsOf(issue);
      const allowed = fields.length > 0 ? ` (the fields are ${fields.join(', ')})` : '';
      return `${keys}: not ${issue.keys.length === 1 ? 'a field' : 'fields'} here: remove or correct ${issue.keys.length === 1 ? 'it' : 'them'}${allowed}`;
    }
    case 'invalid_union': {
      // A discriminated union's: the discriminator (`type`, `target`) matched none of its values.
      const { options, discriminator } = issue as { options?: unknown[]; discriminator?: string };
      if (!options || options.length === 0 || discriminator === undefined) return undefined;
      const given = (issue.input as Record<string, unknown> | undefined)?.[discriminator];
      return given === undefined
        ? `required: one of ${quoted(options)}`
        : `must be one of ${quoted(options)}`;
    }
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${quoted(issue.values)}`
        : `must be one of ${quoted(issue.values)}`;
    default:
      return undefined;
  }
};

/**
 * The SDK's error map for one parse (`schema.safeParse(value, { error: humanError })`): its own words
 * where it has them, zod's for the rest.
 */
const humanError = (issue: RawIssue): string | undefined => sdkWords(issue) ?? zodWords(issue);

/**
 * The parse options that put zod's issues in the SDK's words (the field, the rule, what to do), set per
 * parse so that the app's own zod configuration is left alone.
 */
export const IN_WORDS = { error: humanError } as const;

/**
 * The parse options that give zod's own words (see `zodWords`), for the parses whose issues are read
 * as zod words them: a received webhook event's fields, an API answer, the client's options.
 */
export const ZOD_WORDS = { error: zodWords } as const;
