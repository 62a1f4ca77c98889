// zod's English words as the SDK keeps them (src/schemas/zod-english.ts) against zod's own locale: the
// same message for every kind of issue the SDK's schemas can raise, so that a zod update that rewords
// its locale is noticed here. Kinds they cannot raise (a multiple, a prefix, suffix or substring, a
// record's key, a map's or set's element) are not kept: those get zod's bare `Invalid input`.

import { describe, expect, it } from 'vitest';
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { zodEnglish } from '../src/schemas/zod-english.js';

type RawIssue = z.core.$ZodRawIssue;

const locale = en().localeError;

class Custom {
  readonly x = 1;
}

/** Schemas and values that fail them, one kind of issue (or more) each. */
const CASES: [z.ZodMiniType, unknown[]][] = [
  [
    z.string(),
    [
      undefined,
      null,
      1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      -Infinity,
      1n,
      true,
      [],
      {},
      new Custom(),
      Object.create(null),
      new Date(0),
      () => 1,
      Symbol('s'),
    ],
  ],
  [z.number(), ['1', undefined, Number.NaN, null, []]],
  [z.number().check(z.int()), [1.5, '1', Number.POSITIVE_INFINITY, 2 ** 60]],
  [z.boolean(), ['true']],
  [z.array(z.string()), ['a', [1, 'a', null]]],
  [z.object({ a: z.string() }), [null, [], {}, { a: 1 }]],
  [z.strictObject({ a: z.optional(z.string()) }), [{ b: 1 }, { b: 1, c: 2 }]],
  [z.literal('success'), ['fail', 1]],
  [z.literal(3), [4]],
  [z.literal(5n), [4n]],
  [z.literal(['a', 'b', 1]), ['c']],
  [z.enum(['x', 'y']), ['z']],
  [z.string().check(z.minLength(2)), ['a']],
  [z.string().check(z.maxLength(2)), ['abc']],
  [z.string().check(z.length(2)), ['abc']],
  [z.array(z.number()).check(z.minLength(1)), [[]]],
  [z.array(z.number()).check(z.maxLength(1)), [[1, 2]]],
  [z.number().check(z.gte(0)), [-1]],
  [z.number().check(z.gt(0)), [0]],
  [z.number().check(z.lte(100)), [101]],
  [z.number().check(z.lt(100)), [100]],
  [z.bigint().check(z.gte(1n)), [0n]],
  [z.string().check(z.regex(/^\d+$/)), ['x']],
  [z.templateLiteral(['a', z.number()]), ['b']],
  [z.union([z.string(), z.number()]), [true]],
  [z.xor([z.string(), z.string()]), ['a']],
  [
    z.discriminatedUnion('type', [z.object({ type: z.literal('a') }), z.object({ type: z.literal('b') })]),
    [{ type: 'c' }, {}],
  ],
  [z.set(z.number()).check(z.minSize(2)), [new Set([1])]],
  [z.file().check(z.maxSize(1)), [new File(['abc'], 'f')]],
  [z.string().check(z.refine(() => false)), ['a']],
  [z.never(), [1]],
  [z.nan(), [1]],
];

/** The raw issues a parse raises, as an error map receives them (when the messages are read). */
function rawIssues(schema: z.ZodMiniType, value: unknown): RawIssue[] {
  const issues: RawIssue[] = [];
  const result = schema.safeParse(value, {
    error: (issue) => {
      issues.push(issue);
      return 'x';
    },
  });
  for (const issue of result.error?.issues ?? []) void issue.message;
  return issues;
}

describe("zod's English words", () => {
  it('are the locale words for every kind of issue', () => {
    const codes = new Set<string>();
    let compared = 0;
    for (const [schema, values] of CASES) {
      for (const value of values) {
        for (const issue of rawIssues(schema, value)) {
          codes.add(issue.code ?? 'custom');
          expect(zodEnglish(issue), `${issue.code} for ${typeof value}`).toBe(locale(issue));
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(60);
    expect([...codes].sort()).toEqual([
      'custom',
      'invalid_format',
      'invalid_type',
      'invalid_union',
      'invalid_value',
      'too_big',
      'too_small',
      'unrecognized_keys',
    ]);
  });

  it('are the locale words for issues built by hand: sizes without an origin, a union without options', () => {
    const issues = [
      { code: 'too_big', maximum: 3, inclusive: true, input: 1 },
      { code: 'too_big', maximum: 3, exact: true, origin: 'array', input: [] },
      { code: 'too_small', minimum: 3, inclusive: false, origin: 'date', input: 1 },
      { code: 'invalid_union', errors: [], input: 1, inclusive: false },
      { code: 'invalid_union', errors: [], input: 1, options: [] },
      { code: 'invalid_value', values: ['a', 1n, null, undefined, true], input: 1 },
      { code: 'invalid_format', format: 'template_literal', input: 'a' },
    ] as unknown as RawIssue[];
    for (const issue of issues) expect(zodEnglish(issue)).toBe(locale(issue));
  });
});
