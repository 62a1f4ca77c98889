/**
 * What the SDK adds to one call: `client.sendText` against a raw undici `request` with the same body and
 * headers to the same local node:http server, the limiter off. The server runs in its own process and
 * answers at once; the two clients take turns in interleaved rounds of sequential calls.
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
/** Calls in one block; the two clients take turns block by block, so load elsewhere hits both alike. */
const BLOCK = 50;
const BLOCKS = 200;
const GOAL_MEDIAN_RATIO = 1.3;
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

async function measure(): Promise<void> {
  const server = spawn(process.execPath, ['--import', 'tsx', SELF, 'server'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const base = `http://127.0.0.1:${await firstLine(server)}`;
    const { Agent, request } = await import('undici');
    const { OAClient } = await import('../src/index.js');

    const client = new OAClient({
      baseUrl: base,
      apiKey: 'bench-key',
      apiSecret: 'bench-secret',
      rateLimit: false,
    });
    const { access_token } = await client.generateToken();
    const params = { user_id: 'user-1', msg: 'Your order has shipped', desc: 'Order update' };
    // The same request the SDK sends: same body, same headers, a keep-alive agent of its own.
    const agent = new Agent();
    const url = `${base}${PATH}`;
    const headers = {
      'content-type': 'application/json',
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
    const sdk = async () => {
      if ((await client.sendText(params)) !== 'success') throw new Error('unexpected answer');
    };

    const cases = [
      { name: 'raw undici `request`', call: raw, times: [] as number[], spans: [] as number[] },
      { name: 'SDK `client.sendText`', call: sdk, times: [] as number[], spans: [] as number[] },
    ];
    for (const c of cases) for (let i = 0; i < WARMUP_CALLS; i++) await c.call();
    for (let block = 0; block < BLOCKS; block++) {
      for (const c of block % 2 === 0 ? cases : [...cases].reverse()) {
        const start = performance.now();
        for (let i = 0; i < BLOCK; i++) {
          const t = performance.now();
          await c.call();
          c.times.push(performance.now() - t);
        }
        c.spans.push(performance.now() - start);
      }
    }
    await client.close();
    await agent.close();

    const stats = cases.map((c) => ({
      name: c.name,
      median: median(c.times),
      p99: percentile(c.times, 0.99),
      perSecond: (BLOCK * BLOCKS) / (c.spans.reduce((a, b) => a + b, 0) / 1000),
    }));
    const [rawStats, sdkStats] = stats as [(typeof stats)[0], (typeof stats)[0]];
    const medianRatio = sdkStats.median / rawStats.median;
    const p99Ratio = sdkStats.p99 / rawStats.p99;
    const us = (ms: number) => `${fmt(ms * 1000)} µs`;

    report({
      title: 'Per-call overhead',
      command: 'npx tsx bench/overhead.bench.ts',
      rows: [
        {
          figure: '`sendText` time per call, median',
          sdk: us(sdkStats.median),
          baseline: `${us(rawStats.median)} (raw undici)`,
          ratio: `${medianRatio.toFixed(2)}x`,
          goal: `<= ${GOAL_MEDIAN_RATIO}x`,
          pass: medianRatio <= GOAL_MEDIAN_RATIO,
        },
        {
          figure: '`sendText` time per call, p99',
          sdk: us(sdkStats.p99),
          baseline: `${us(rawStats.p99)} (raw undici)`,
          ratio: `${p99Ratio.toFixed(2)}x`,
        },
        {
          figure: '`sendText` calls per second, one at a time',
          sdk: `${fmt(sdkStats.perSecond)}/s`,
          baseline: `${fmt(rawStats.perSecond)}/s (raw undici)`,
          ratio: `${(sdkStats.perSecond / rawStats.perSecond).toFixed(2)}x`,
        },
      ],
      details: [
        'What the SDK adds to one call: `client.sendText` (parameter validation, the token, JSON, undici,',
        "the answer's envelope and schema, events) against a raw undici `request` with the same body and",
        'headers, each with a keep-alive agent of its own, to the same node:http server (in its own process,',
        `answering at once), the rate limiter off. ${fmt(WARMUP_CALLS)} warm-up calls each, then`,
        `${fmt(BLOCK * BLOCKS)} sequential calls each, the two taking turns in blocks of ${BLOCK}.`,
        '',
        table(
          ['case', 'median', 'p99', 'calls/s (one at a time)'],
          stats.map((s) => [s.name, us(s.median), us(s.p99), fmt(s.perSecond)]),
          '---|---:|---:|---:',
        ),
        '',
        `Ratio of medians: ${medianRatio.toFixed(2)}x (goal: at most ${GOAL_MEDIAN_RATIO}x); ratio of p99s: ${p99Ratio.toFixed(2)}x.`,
      ].join('\n'),
    });
  } finally {
    server.stdin?.end();
    server.kill();
  }
}

if (process.argv[2] === 'server') serve();
else await measure();
