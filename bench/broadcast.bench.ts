/**
 * What a large broadcast costs end to end: `client.broadcast` of 5 items to 1, 1,000, 10,000 and
 * 100,000 selected users (checked once, serialised, posted, its answer read), against a raw undici
 * `request` posting the same JSON with the same headers to the same local server (what a client that
 * checks nothing would do). The server runs in its own process, reads the body and answers at once.
 * The two take turns in small interleaved blocks; each figure is a median.
 *
 *   npx tsx bench/broadcast.bench.ts
 *
 * Roles of this one file: no argument = the measurement; `server` = the answering server.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { firstLine, fmt, median, report, type SummaryRow, table, tokenPair } from './support.js';

const SELF = fileURLToPath(import.meta.url);
const SIZES = [1, 1_000, 10_000, 100_000];
const PATH = '/api/v2/public/message/broadcast-message';
/** Runs per size and contender, in blocks of BLOCK that alternate between the two. */
const RUNS: Record<number, number> = { 1: 600, 1000: 300, 10000: 120, 100000: 30 };
const BLOCK = 3;
const GOAL_RATIO_100K = 2;

function serve(): void {
  const pair = JSON.stringify({ data: tokenPair() });
  const record = JSON.stringify({
    data: {
      id: 'job-1',
      data: [{ type: 'message', msg: 'Spring sale starts today' }],
      broadcast_at: '2026-05-10T09:38:46.000Z',
      created_at: '2026-05-10T09:38:46.000Z',
      estimate_time_detail: { total_job_time_minutes: 1 },
    },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const body = req.url?.endsWith('/auth/token') ? pair : record;
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
    const { items, OAClient } = await import('../src/index.js');
    const client = new OAClient({
      baseUrl: base,
      apiKey: 'bench-key',
      apiSecret: 'bench-secret',
      rateLimit: false,
    });
    const { access_token } = await client.generateToken();
    const agent = new Agent();
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json',
      authorization: `Bearer ${access_token}`,
      'user-agent': 'oa-messaging-bench',
    };
    const fiveItems = [
      items.text('Spring sale starts today', 'Spring sale'),
      items.imageLink('https://cdn.example.com/sale.png', 'https://shop.example.com/sale'),
      items.image('https://cdn.example.com/banner.png'),
      items.audio({
        audio_url: 'https://cdn.example.com/jingle.m4a',
        audio_uuid: '0b3c2d1e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
        audio_size: 48_213,
        audio_duration: 4,
      }),
      items.text('Up to 50% off, today only'),
    ];

    const results: { users: number; sdk: number; raw: number; ratio: number; kb: number }[] = [];
    for (const users of SIZES) {
      const params = {
        target: 'selected' as const,
        user_ids: Array.from({ length: users }, (_, i) => `user-${String(i).padStart(6, '0')}`),
        items: fiveItems,
      };
      const raw = async () => {
        const res = await request(`${base}${PATH}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(params),
          dispatcher: agent,
        });
        const answer = (await res.body.json()) as { data: { id?: string } };
        if (res.statusCode !== 200 || answer.data.id !== 'job-1') throw new Error('unexpected answer');
      };
      const sdk = async () => {
        if ((await client.broadcast(params)).id !== 'job-1') throw new Error('unexpected answer');
      };
      const runs = RUNS[users] ?? 30;
      const times: [number[], number[]] = [[], []];
      for (let i = 0; i < Math.max(5, runs / 10); i++) {
        await raw();
        await sdk();
      }
      // Blocks alternate, each side first in turn, so load elsewhere on the machine hits both alike.
      for (let block = 0; block < runs / BLOCK; block++) {
        const order = block % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
        for (const side of order) {
          for (let i = 0; i < BLOCK; i++) {
            const t = performance.now();
            await (side === 0 ? raw() : sdk());
            times[side].push(performance.now() - t);
          }
        }
      }
      const rawMs = median(times[0]);
      const sdkMs = median(times[1]);
      const kb = Buffer.byteLength(JSON.stringify(params)) / 1024;
      results.push({ users, sdk: sdkMs, raw: rawMs, ratio: sdkMs / rawMs, kb });
    }
    await client.close();
    await agent.close();

    const ms = (value: number) => `${value.toFixed(2)} ms`;
    const rows: SummaryRow[] = results
      .filter((result) => result.users >= 10_000)
      .map((result) => ({
        figure: `\`broadcast\` of 5 items to ${fmt(result.users)} user_ids, end to end`,
        sdk: ms(result.sdk),
        baseline: `${ms(result.raw)} (raw POST of the same JSON)`,
        ratio: `${result.ratio.toFixed(2)}x`,
        ...(result.users === 100_000
          ? { goal: `<= ${GOAL_RATIO_100K}`, pass: result.ratio <= GOAL_RATIO_100K }
          : {}),
      }));
    // Linear: the SDK's own cost per user_id at 100k is no more than twice that at 10k.
    const own = (users: number) => {
      const result = results.find((r) => r.users === users);
      return result ? Math.max(0, result.sdk - result.raw) / users : Number.NaN;
    };
    const growth = own(100_000) / Math.max(own(10_000), 1e-9);
    rows.push({
      figure: "`broadcast`: the SDK's own cost per user_id at 100k over that at 10k (linear: ~1)",
      sdk: `${(own(100_000) * 1000).toFixed(3)} µs/user_id`,
      baseline: `${(own(10_000) * 1000).toFixed(3)} µs/user_id (at 10k)`,
      ratio: `${growth.toFixed(2)}x`,
      goal: '<= 2',
      pass: growth <= 2,
    });
    report({
      title: 'Broadcast to many users',
      command: 'npx tsx bench/broadcast.bench.ts',
      rows,
      details: [
        "`client.broadcast({ target: 'selected', user_ids, items })` with 5 items (text, image link, image,",
        'audio, text), checked once, serialised, posted and its answer read, against a raw undici `request`',
        'posting the same JSON with the same headers over a keep-alive agent of its own, to the same',
        'local server (its own process; it reads the body and answers at once). The client runs with',
        '`rateLimit: false` (the limiter is measured in its own benchmark). Median per call, the two',
        `alternating in blocks of ${BLOCK} calls after a warm-up.`,
        '',
        table(
          ['user_ids', 'JSON body', 'SDK `broadcast`', 'raw POST', 'ratio'],
          results.map((result) => [
            fmt(result.users),
            `${fmt(result.kb, result.kb < 10 ? 1 : 0)} KB`,
            ms(result.sdk),
            ms(result.raw),
            `${result.ratio.toFixed(2)}x`,
          ]),
          '---:|---:|---:|---:|---:',
        ),
      ].join('\n'),
    });
  } finally {
    server.stdin?.end();
  }
}

if (process.argv[2] === 'server') serve();
else await measure();
