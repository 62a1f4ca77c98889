/**
 * What checking and serialising a large broadcast costs: a broadcast to 10,000 selected users with 5
 * items, validated by the SDK's schema and turned into the JSON body it sends, against `JSON.stringify`
 * of the same object alone (what a client that checks nothing would do).
 *
 *   npx tsx bench/broadcast.bench.ts
 */

import { items } from '../src/index.js';
import { BroadcastParamsSchema } from '../src/schemas/requests.js';
import { validate } from '../src/schemas/validate.js';
import { fmt, median, report, table } from './support.js';

const USERS = 10_000;
const WARMUP = 30;
const RUNS = 200;
const ROUNDS = 5;

const params = {
  target: 'selected' as const,
  user_ids: Array.from({ length: USERS }, (_, i) => `user-${String(i).padStart(6, '0')}`),
  items: [
    items.text('Spring sale starts today', 'Spring sale'),
    items.imageLink('https://cdn.example.com/sale.png', 'https://shop.example.com/sale'),
    items.image('https://cdn.example.com/banner.png'),
    items.video('5f0c8a9e-2d3b-4c1a-9e8f-7a6b5c4d3e2f'),
    items.audio({
      audio_url: 'https://cdn.example.com/jingle.m4a',
      audio_uuid: '0b3c2d1e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
      audio_size: 48_213,
      audio_duration: 4,
    }),
  ],
};

let bytes = 0;
const cases = [
  { name: '`JSON.stringify(params)` (baseline)', run: () => JSON.stringify(params) },
  {
    name: 'SDK: schema check + `JSON.stringify` (what `client.broadcast` does before sending)',
    run: () => JSON.stringify(validate(BroadcastParamsSchema, params, 'broadcast params')),
  },
];

const perRun = cases.map((): number[] => []);
for (const c of cases) for (let i = 0; i < WARMUP; i++) bytes = c.run().length;
// Rounds interleave the cases, so a burst of load elsewhere on the machine does not land on one only.
for (let round = 0; round < ROUNDS; round++) {
  cases.forEach((c, index) => {
    for (let i = 0; i < RUNS / ROUNDS; i++) {
      const t = performance.now();
      c.run();
      perRun[index]!.push(performance.now() - t);
    }
  });
}
const [raw, sdk] = perRun.map((runs) => median(runs)) as [number, number];
const ms = (value: number) => `${value.toFixed(2)} ms`;

report({
  title: 'Validating and serialising a broadcast',
  command: 'npx tsx bench/broadcast.bench.ts',
  rows: [
    {
      figure: `broadcast of 5 items to ${fmt(USERS)} user_ids: check + serialise`,
      sdk: ms(sdk),
      baseline: `${ms(raw)} (JSON.stringify alone)`,
      ratio: `${(sdk / raw).toFixed(2)}x`,
    },
  ],
  details: [
    `A \`target: 'selected'\` broadcast to ${fmt(USERS)} user_ids with 5 items (text, image link, image,`,
    `video, audio): ${fmt(bytes / 1024, 0)} KB of JSON. The SDK checks it against its schema (every`,
    'user_id, every item, the limits) and serialises it, as `client.broadcast` does before anything is',
    `sent; the baseline serialises the same object without checking it. Median of ${RUNS} runs each, in`,
    `${ROUNDS} interleaved rounds, after ${WARMUP} warm-up runs.`,
    '',
    table(
      ['case', 'median per broadcast', 'broadcasts/s'],
      cases.map((c, index) => {
        const value = index === 0 ? raw : sdk;
        return [c.name, ms(value), fmt(1000 / value)];
      }),
      '---|---:|---:',
    ),
  ].join('\n'),
});
