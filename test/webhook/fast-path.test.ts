/**
 * The webhook reader's fast path (compiled readers and the hand-written reader of a well-formed event,
 * which Node, Bun and Deno bring) against the reading workerd does, every field judged by its schema:
 * on the Tencent samples, on every mutation of every field of them, and on generated events, both give
 * the same event, the same values in the same key order, the same issues.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readAnyEvent, readEventBySchemas, readWebhookEvent } from '../../src/webhook/read-event.js';
import { eventLike, validEvent } from './arbitraries.js';
import { envelope, eventWith, fixtureNames, loadFixture } from './support.js';

function expectSame(value: Record<string, unknown>): void {
  const bySchemas = readEventBySchemas(value);
  for (const fast of [readWebhookEvent(value), readAnyEvent(value)]) {
    expect(fast).toStrictEqual(bySchemas);
    // toStrictEqual does not look at the order of keys.
    expect(JSON.stringify(fast)).toBe(JSON.stringify(bySchemas));
  }
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
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '12',
  ' 7e3 ',
  '0x10',
  'abc',
  '',
  true,
  {},
  [],
  [{}],
  { MsgType: 'TIMTextElem', MsgContent: { Text: 'x' } },
  { MsgType: 'TIMNewElem', MsgContent: 1 },
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

describe('the webhook fast path', () => {
  it('reads each sample as the schemas do', () => {
    expect(samples.length).toBeGreaterThan(10);
    for (const sample of samples) expectSame(sample);
  });

  it('reads every mutation of every field of the samples as the schemas do, keys reordered too', () => {
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
          const object = at as Record<string, unknown>;
          for (const variant of [
            Object.fromEntries(Object.entries(object).reverse()),
            { extra: 1, ...object },
            { ...object, extra: 1 },
          ]) {
            expectSame(replaced(sample, path, variant) as Record<string, unknown>);
          }
        }
      }
    }
    expect(count).toBeGreaterThan(1000);
  });

  it('reads an own __proto__ key and objects that are not plain as the schemas do', () => {
    const sample = samples[0] as Record<string, unknown>;
    expectSame(JSON.parse(`{"__proto__": {"x": 1}, ${JSON.stringify(sample).slice(1)}`));
    const data = sample.data as Record<string, unknown>;
    expectSame({ ...sample, data: JSON.parse(`{"__proto__": 1, ${JSON.stringify(data).slice(1)}`) });
    expectSame({ ...sample, data: Object.assign(Object.create({ GroupId: 'g' }), data) });
    expectSame({ ...sample, data: Object.assign(Object.create(null), data) });
  });

  it('reads generated events as the schemas do', () => {
    fc.assert(
      fc.property(fc.oneof(validEvent, eventLike), (value) => expectSame(value as Record<string, unknown>)),
      { numRuns: 500 },
    );
  });
});
