/**
 * The hand-written reader of well-formed events against the general one (each field judged by its
 * schema): on the Tencent samples, on every mutation of every field of them, and on generated events,
 * both must give the same event, the same values in the same key order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OfflinePushInfoSchema, TIMMessageCallbackSchema } from '../../src/webhook/index.js';
import { readAnyEvent, readWebhookEvent } from '../../src/webhook/read-event.js';
import { WebhookEnvelopeSchema } from '../../src/webhook/schemas.js';
import { WELL_FORMED_FIELDS } from '../../src/webhook/well-formed.js';
import { eventLike, validEvent } from './arbitraries.js';
import { envelope, eventWith, fixtureNames, loadFixture } from './support.js';

function expectSame(value: Record<string, unknown>): void {
  const fast = readWebhookEvent(value);
  const general = readAnyEvent(value);
  expect(fast).toStrictEqual(general);
  // toStrictEqual does not look at the order of keys.
  expect(JSON.stringify(fast)).toBe(JSON.stringify(general));
}

/** Each sample as a whole event: callbacks in the envelope, elements and bodies in a callback. */
const samples = fixtureNames().flatMap((name) => {
  const fixture = loadFixture(name);
  if ('MsgType' in fixture) return [eventWith([fixture])];
  if ('From_Account' in fixture) return [envelope(fixture)];
  if ('MsgBody' in fixture) return [eventWith([], 1, fixture)];
  return [];
});

const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  0,
  -1.5,
  '12',
  ' 7e3 ',
  'abc',
  '',
  true,
  {},
  [],
  [{}],
  { MsgType: 'TIMTextElem', MsgContent: { Text: 'x' } },
  '__delete__',
];

/** Every path to a value in `value`, objects and arrays included. */
function paths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [at];
  const keys = Array.isArray(value) ? value.map((_, index) => index) : Object.keys(value);
  return [
    at,
    ...keys.flatMap((key) => paths((value as Record<string | number, unknown>)[key], [...at, key])),
  ];
}

/** A deep copy of `value` with the value at `path` replaced (or deleted). */
function replaced(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1) as string | number;
  if (replacement === '__delete__') delete parent[last];
  else parent[last] = replacement;
  return copy;
}

/** `value` with its keys in reverse order, and with an extra key first. */
function reordered(value: Record<string, unknown>): Record<string, unknown>[] {
  return [
    Object.fromEntries(Object.entries(value).reverse()),
    { extra: 1, ...value },
    { ...value, extra: 1 },
  ];
}

describe('the well-formed reader', () => {
  it('knows every field of the envelope, the callback and OfflinePushInfo, in the schemas order', () => {
    expect(WELL_FORMED_FIELDS.envelope).toEqual(Object.keys(WebhookEnvelopeSchema.shape));
    expect(WELL_FORMED_FIELDS.callback).toEqual(Object.keys(TIMMessageCallbackSchema.shape));
    expect(WELL_FORMED_FIELDS.pushInfo).toEqual(Object.keys(OfflinePushInfoSchema.shape));
  });

  it('reads each sample as the general reader does', () => {
    expect(samples.length).toBeGreaterThan(10);
    for (const sample of samples) expectSame(sample);
  });

  it('reads every mutation of every field of the samples as the general reader does', () => {
    let count = 0;
    for (const sample of samples) {
      for (const path of paths(sample)) {
        if (path.length === 0) continue;
        for (const replacement of REPLACEMENTS) {
          expectSame(replaced(sample, path, replacement) as Record<string, unknown>);
          count += 1;
        }
        const at = path.reduce<unknown>(
          (node, key) => (node as Record<string | number, unknown>)[key],
          sample,
        );
        if (typeof at === 'object' && at !== null && !Array.isArray(at)) {
          for (const variant of reordered(at as Record<string, unknown>)) {
            expectSame(replaced(sample, path, variant) as Record<string, unknown>);
          }
        }
      }
    }
    expect(count).toBeGreaterThan(1000);
  });

  it('leaves an own __proto__ key, a non-plain object and a getter to the general reader', () => {
    const sample = samples[0] as Record<string, unknown>;
    expectSame(JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(sample).slice(1)}`));
    const data = sample.data as Record<string, unknown>;
    expectSame({ ...sample, data: JSON.parse(`{"__proto__": 1, ${JSON.stringify(data).slice(1)}`) });
    expectSame({ ...sample, data: Object.assign(Object.create({ GroupId: 'g' }), data) });
    expectSame({ ...sample, data: Object.assign(Object.create(null), data) });
  });

  it('reads generated events as the general reader does', () => {
    fc.assert(
      fc.property(fc.oneof(validEvent, eventLike), (value) => expectSame(value as Record<string, unknown>)),
      { numRuns: 500 },
    );
  });
});
