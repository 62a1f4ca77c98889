/**
 * What the SDK adds to one call: `client.sendText` against a raw undici `request` with the same body and
 * headers to the same local node:http server, with the client's rate limiter on (limits raised so that
 * it never waits: the cost of the free-slot path) and off. The server runs in its own process and
 * answers at once. The three contenders take turns in interleaved blocks, in a changing order, so
 * that load elsewhere on the machine hits them alike; each figure is a median over rounds.
 *
 *   npx tsx bench/overhead.bench.ts
 *
 * Roles of this one file: no argument = the measurement; `server` = the answering server.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { firstLine, fmt, median, percentile, report, table, tokenPair } from './support.js';

const SELF = fileURLToPath(import.meta.url);
const WARMUP_CALLS = 3000;
/** Sequential calls in one block; the contenders take turns block by block. */
const BLOCK = 50;
const BLOCKS = 120;
/** Calls kept in flight at once for the throughput figure, and calls in one throughput round. */
const IN_FLIGHT = 32;
const ROUND_CALLS = 2000;
const ROUNDS = 15;
const GOAL_MEDIAN_RATIO = 1.0;
const GOAL_THROUGHPUT_RATIO = 1.0;
const PATH = '/api/v2/public/webhook/broadcast-message';

function serve(): void {
  const pair = JSON.stringify({ data: tokenPair() });
  const success = JSON.stringify({ data: 'success' });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = req.url?.endsWith('/auth/token') ? pair : success;
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
  });
  process.stdin.on('end', () => process.exit(0)).resume();
}

interface Contender {
  name: string;
  call: () => Promise<void>;
  times: number[];
  /** Calls per second of each throughput round. */
  rates: number[];
}

/** Runs `calls` calls of `call`, `inFlight` at a time; resolves to calls per second. */
async function throughput(call: () => Promise<void>, calls: number, inFlight: number): Promise<number> {
  let next = 0;
  const start = performance.now();
  const lane = async () => {
    while (next < calls) {
      next++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return calls / ((performance.now() - start) / 1000);
}

/** Each contender first in turn: none always runs right after another's garbage. */
const rotate = <T>(list: readonly T[], by: number): T[] =>
  list.map((_, i) => list[(i + by) % list.length] as T);

async function measure(): Promise<void> {
  const server = spawn(process.execPath, ['--import', 'tsx', SELF, 'server'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${await firstLine(server)}`;
    const { Agent, request } = await import('undici');
    const { OAClient } = await import('../src/index.js');

    const credentials = { baseUrl: base, apiKey: 'bench-key', apiSecret: 'bench-secret' };
    const unlimited = { max: 1e9, windowMs: 60_000 };
    const withLimiter = new OAClient({
      ...credentials,
      rateLimit: { general: unlimited, upload: unlimited },
    });
    const withoutLimiter = new OAClient({ ...credentials, rateLimit: false });
    const { access_token } = await withoutLimiter.generateToken();
    await withLimiter.generateToken();
    const params = { user_id: 'user-1', msg: 'Your order has shipped', desc: 'Order update' };
    // The same request the SDK sends: same body, same headers, a keep-alive agent of its own.
    const agent = new Agent();
    const url = `${base}${PATH}`;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Bearer ${access_token}`,
      'user-agent': 'oa-messaging-bench',
    };
    const raw = async () => {
      const res = await request(url, {
        method: 'POST',
        headers,
        body: JSON.stringify(params),
        dispatcher: agent,
      });
      const answer = (await res.body.json()) as { data: unknown };
      if (res.statusCode !== 200 || answer.data !== 'success') throw new Error('unexpected answer');
    };
    const sdk = (client: InstanceType<typeof OAClient>) => async () => {
      if ((await client.sendText(params)) !== 'success') throw new Error('unexpected answer');
    };

    const contenders: Contender[] = [
      { name: 'raw undici `request`', call: raw, times: [], rates: [] },
      { name: 'SDK `sendText`, limiter on', call: sdk(withLimiter), times: [], rates: [] },
      { name: 'SDK `sendText`, limiter off', call: sdk(withoutLimiter), times: [], rates: [] },
    ];
    for (const c of contenders) for (let i = 0; i < WARMUP_CALLS; i++) await c.call();
    for (let block = 0; block < BLOCKS; block++) {
      for (const c of rotate(contenders, block)) {
        for (let i = 0; i < BLOCK; i++) {
          const t = performance.now();
          await c.call();
          c.times.push(performance.now() - t);
        }
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of rotate(contenders, round))
        c.rates.push(await throughput(c.call, ROUND_CALLS, IN_FLIGHT));
    }
    await withLimiter.close();
    await withoutLimiter.close();
    await agent.close();

    const stats = contenders.map((c) => ({
      name: c.name,
      median: median(c.times),
      p99: percentile(c.times, 0.99),
      perSecond: median(c.rates),
    }));
    const [rawStats, onStats, offStats] = stats as [(typeof stats)[0], (typeof stats)[0], (typeof stats)[0]];
    const us = (ms: number) => `${fmt(ms * 1000)} µs`;
    const rows = [
      ['on', onStats],
      ['off', offStats],
    ].flatMap(([mode, s]) => {
      const mine = s as (typeof stats)[0];
      const latency = mine.median / rawStats.median;
      const rate = mine.perSecond / rawStats.perSecond;
      return [
        {
          figure: `\`sendText\` time per call, median, limiter ${mode}`,
          sdk: us(mine.median),
          baseline: `${us(rawStats.median)} (raw undici)`,
          ratio: `${latency.toFixed(2)}x`,
          goal: `<= ${GOAL_MEDIAN_RATIO.toFixed(1)}x`,
          pass: latency <= GOAL_MEDIAN_RATIO,
        },
        {
          figure: `\`sendText\` calls per second, ${IN_FLIGHT} in flight, limiter ${mode}`,
          sdk: `${fmt(mine.perSecond)}/s`,
          baseline: `${fmt(rawStats.perSecond)}/s (raw undici)`,
          ratio: `${rate.toFixed(2)}x`,
          goal: `>= ${GOAL_THROUGHPUT_RATIO.toFixed(1)}x`,
          pass: rate >= GOAL_THROUGHPUT_RATIO,
        },
      ];
    });

    report({
      title: 'Per-call overhead',
      command: 'npx tsx bench/overhead.bench.ts',
      rows,
      details: [
        'What the SDK adds to one call: `client.sendText` (options and parameter validation, the rate',
        "limiter's slot, the token, JSON, the transport, the answer's envelope and schema, events) against a",
        'raw undici `request` with the same body and headers (`body.json()` for the answer), each with a',
        'keep-alive agent of its own, to the same node:http server (in its own process, answering at once).',
        'The SDK runs twice: with its rate limiter on, its limits raised so that it never waits (the cost of',
        'granting a free slot), and with `rateLimit: false`.',
        '',
        `${fmt(WARMUP_CALLS)} warm-up calls each. Latency: ${fmt(BLOCK * BLOCKS)} sequential calls each, the`,
        `three taking turns in blocks of ${BLOCK}, in a rotating order. Throughput: ${ROUNDS} rounds of`,
        `${fmt(ROUND_CALLS)} calls with ${IN_FLIGHT} in flight, the three taking turns; the median round.`,
        '',
        table(
          ['case', 'median', 'p99', `calls/s (${IN_FLIGHT} in flight)`],
          stats.map((s) => [s.name, us(s.median), us(s.p99), fmt(s.perSecond)]),
          '---|---:|---:|---:',
        ),
      ].join('\n'),
    });
  } finally {
    server.stdin?.end();
    server.kill();
  }
}

if (process.argv[2] === 'server') serve();
else await measure();
