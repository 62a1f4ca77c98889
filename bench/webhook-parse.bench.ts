/**
 * How fast `parseWebhookEvent` turns webhook bodies into typed events, against plain `JSON.parse` of the
 * same bodies (the floor: any receiver has to do at least that).
 *
 *   npx tsx bench/webhook-parse.bench.ts
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseWebhookEvent } from '../src/webhook/index.js';
import { fmt, median, report, table } from './support.js';

const FIXTURES = new URL('../test/fixtures/tim/', import.meta.url);
const WARMUP_MS = 300;
const MEASURE_MS = 300;
// Rounds interleave the cases so a burst of load elsewhere on the machine does not land on one case only.
const ROUNDS = 9;

/** Every Tencent element fixture, one per event, plus a text+face+text body: realistic, small bodies. */
function bodies(): string[] {
  const base = {
    CallbackCommand: 'C2C.CallbackAfterSendMsg',
    From_Account: 'customer_1001',
    To_Account: 'demo_shop',
    MsgSeq: 48374,
    MsgRandom: 2837546,
    MsgTime: 1557481126,
    MsgKey: '48374_2837546_1557481126',
    SendMsgResult: 0,
    UnreadMsgNum: 1,
    EventTime: '1557481126123',
  };
  const wrap = (data: object) =>
    JSON.stringify({
      event_type: 'message',
      username: 'demo_shop',
      timestamp: '2019-05-10T09:38:46.000Z',
      data,
    });
  const out: string[] = [];
  for (const name of readdirSync(FIXTURES).filter((file) => file.endsWith('.json'))) {
    const fixture = JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;
    if ('MsgType' in fixture) out.push(wrap({ ...base, MsgBody: [fixture] }));
    else if ('MsgBody' in fixture) out.push(wrap({ ...base, ...fixture }));
  }
  return out;
}

let sink = 0;

/** Runs `fn` over the bodies for `ms` milliseconds; returns items per second. */
function measure(items: readonly unknown[], fn: (item: unknown) => unknown, ms: number): number {
  let count = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(ms) * 1_000_000n;
  let now = start;
  while (now < deadline) {
    for (const item of items) {
      // Touch the result so the work cannot be optimised away.
      if (fn(item) !== undefined) sink += 1;
    }
    count += items.length;
    now = process.hrtime.bigint();
  }
  return count / (Number(now - start) / 1e9);
}

const texts = bodies();
const objects = texts.map((text) => JSON.parse(text) as unknown);
const cases: [string, readonly unknown[], (item: unknown) => unknown][] = [
  ['`JSON.parse(body)` (baseline)', texts, (text) => JSON.parse(text as string)],
  ['`parseWebhookEvent(body)` (string: JSON.parse + schema)', texts, (text) => parseWebhookEvent(text)],
  [
    '`parseWebhookEvent(object)` (schema only, body already parsed)',
    objects,
    (value) => parseWebhookEvent(value),
  ],
];

for (const [, items, fn] of cases) measure(items, fn, WARMUP_MS);
const samples = cases.map((): number[] => []);
for (let round = 0; round < ROUNDS; round += 1) {
  cases.forEach(([, items, fn], index) => {
    samples[index]!.push(measure(items, fn, MEASURE_MS));
  });
}
const results = cases.map(([name], index) => ({ name, perSecond: median(samples[index]!) }));
const baseline = results[0]!.perSecond;

const bytes = texts.reduce((total, text) => total + Buffer.byteLength(text), 0);
const full = results[1]!.perSecond;
// The ratio of each round, then their median: both sides of a ratio saw the same moment's load.
const ratio = median(samples[1]!.map((perSecond, round) => perSecond / samples[0]![round]!));
if (sink === 0) throw new Error('nothing was measured');

report({
  title: 'Webhook parsing',
  command: 'npx tsx bench/webhook-parse.bench.ts',
  rows: [
    {
      figure: 'webhook events parsed per second (`parseWebhookEvent(body)`)',
      sdk: `${fmt(full)}/s`,
      baseline: `${fmt(baseline)}/s (JSON.parse)`,
      ratio: `${ratio.toFixed(2)}x`,
      goal: '>= 0.5',
      pass: ratio >= 0.5,
    },
  ],
  details: [
    'What it costs to turn a webhook body into a typed, validated `WebhookEvent` with',
    '`parseWebhookEvent`, against a plain `JSON.parse` of the same bodies (the least any receiver does).',
    `The bodies are the ${texts.length} Tencent documentation samples (every element type, legacy elements`,
    'without URLs, combined bodies), each wrapped in the OA envelope as the OA service sends it:',
    `${fmt(bytes / texts.length)} bytes on average. Median of ${ROUNDS} interleaved rounds of ${MEASURE_MS} ms each`,
    "(the ratio: median of each round's ratio).",
    '',
    table(
      ['case', 'events/s', 'µs/event', 'time vs JSON.parse'],
      results.map(({ name, perSecond }) => [
        name,
        fmt(perSecond),
        (1e6 / perSecond).toFixed(2),
        `${(baseline / perSecond).toFixed(1)}x`,
      ]),
      '---|---:|---:|---:',
    ),
  ].join('\n'),
});
