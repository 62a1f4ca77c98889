// The options schemas built without z.extend (src/schemas/requests.ts, responses.ts) against the ones
// z.extend makes from the same fields: the same fields in the same order, and the same result (value,
// key order, issues in zod's words and in the SDK's) for every input tried.

import { describe, expect, it } from 'vitest';
import * as z from 'zod/mini';
import { IN_WORDS, ZOD_WORDS } from '../src/schemas/messages.js';
import {
  BroadcastOptionsSchema,
  RequestOptionsSchema,
  SendFileOptionsSchema,
  SendVideoOptionsSchema,
  UploadOptionsSchema,
} from '../src/schemas/requests.js';
import { TokenPairSchema } from '../src/schemas/responses.js';

type ObjectSchema = z.ZodMiniObject<z.core.$ZodShape>;

/** The fields of `schema` that `base` does not have. */
const ownFields = (schema: ObjectSchema, base: ObjectSchema) =>
  Object.fromEntries(Object.entries(schema.shape).filter(([key]) => !(key in base.shape)));

const request = RequestOptionsSchema as unknown as ObjectSchema;
const upload = UploadOptionsSchema as unknown as ObjectSchema;
const extendedUpload = z.extend(request, ownFields(upload, request));

const PAIRS: [string, ObjectSchema, z.ZodMiniType][] = [
  ['UploadOptionsSchema', upload, extendedUpload],
  [
    'SendVideoOptionsSchema',
    SendVideoOptionsSchema as unknown as ObjectSchema,
    z.extend(request, ownFields(SendVideoOptionsSchema as unknown as ObjectSchema, request)),
  ],
  [
    'SendFileOptionsSchema',
    SendFileOptionsSchema as unknown as ObjectSchema,
    z.extend(extendedUpload, ownFields(SendFileOptionsSchema as unknown as ObjectSchema, upload)),
  ],
  [
    'BroadcastOptionsSchema',
    BroadcastOptionsSchema as unknown as ObjectSchema,
    z.extend(request, ownFields(BroadcastOptionsSchema as unknown as ObjectSchema, request)),
  ],
];

const VALUES: unknown[] = [
  undefined,
  null,
  0,
  'x',
  -1,
  1.5,
  101,
  5,
  '',
  ' ',
  'u1',
  true,
  false,
  {},
  [],
  { timeoutMs: 1 },
  { x: 1 },
  () => {},
  new AbortController().signal,
];
const KEYS = [
  'signal',
  'timeoutMs',
  'maxRetries',
  'onResponse',
  'filename',
  'contentType',
  'onProgress',
  'waitForTranscode',
  'onUploaded',
  'videoProbeUserId',
  'unknownOption',
];

/** Inputs: not objects, each key with each value, and a few with several keys in both orders. */
const INPUTS: unknown[] = [
  ...VALUES,
  ...KEYS.flatMap((key) => VALUES.map((value) => ({ [key]: value }))),
  { unknownOption: 1, maxRetries: 2, filename: 'a.png', waitForTranscode: false },
  { waitForTranscode: { timeoutMs: 5 }, filename: 'a.png', maxRetries: 2, unknownOption: 1 },
  { maxRetries: -1, filename: 1, onUploaded: 'x', videoProbeUserId: '', waitForTranscode: 'no' },
];

/** What a parse gives, keys in order: the value, or the issues. */
function outcome(schema: z.ZodMiniType, input: unknown, params?: object): string {
  const result = schema.safeParse(input, params);
  if (result.success) return JSON.stringify({ data: result.data, keys: Object.keys(Object(result.data)) });
  return JSON.stringify(result.error.issues);
}

describe('options schemas built without z.extend', () => {
  for (const [name, built, extended] of PAIRS) {
    it(`${name} is what z.extend makes`, () => {
      expect(Object.keys(built.shape)).toEqual(Object.keys((extended as ObjectSchema).shape));
      for (const input of INPUTS) {
        for (const params of [undefined, IN_WORDS, ZOD_WORDS]) {
          expect(outcome(built, input, params)).toBe(outcome(extended, input, params));
        }
      }
    });
  }

  it('TokenPairSchema is what z.extend makes', () => {
    // The schema is pipe(pipe(fields, fill in expires_in), check): its parts, to build it with z.extend.
    const pipes = TokenPairSchema.def.in as unknown as {
      def: { in: ObjectSchema; out: z.ZodMiniType<unknown, Record<string, unknown>> };
    };
    const filled = TokenPairSchema.def.out as unknown as ObjectSchema;
    const built = pipes.def.in;
    const extended = z.pipe(z.pipe(z.extend(filled, ownOrReplaced(built, filled)), pipes.def.out), filled);
    expect(Object.keys(built.shape)).toEqual(Object.keys(filled.shape));
    const fields: unknown[] = [undefined, null, 1, '', 'x', '1h', 3600, {}, []];
    let compared = 0;
    for (const access_token of ['jwt', '', 5, undefined]) {
      for (const refresh_token of fields) {
        for (const token_type of fields) {
          for (const expires_in of [undefined, '1h', 60, 0, null, 'x']) {
            const input = { extra: 1, access_token, refresh_token, token_type, expires_in };
            for (const params of [undefined, ZOD_WORDS]) {
              expect(outcome(TokenPairSchema, input, params)).toBe(outcome(extended, input, params));
              compared++;
            }
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(3000);
  });
});

/** The fields of `built` that are not `base`'s own schemas (added, or put in place of one). */
function ownOrReplaced(built: ObjectSchema, base: ObjectSchema) {
  return Object.fromEntries(
    Object.entries(built.shape).filter(([key, schema]) => base.shape[key] !== schema),
  );
}
