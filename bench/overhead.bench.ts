/**
 * What the SDK adds to one call: `client.sendText` against a raw undici `request` with the same body and
 * headers to the same local node:http server, with the client's rate limiter on (limits raised so that
 * it never waits: the cost of the free-slot path) and off. The server runs in its own process and
 * answers at once. Then what tracing adds: the same client given OpenTelemetry's no-op providers, and
 * given a real SDK (spans and metrics kept in memory). The contenders take turns in interleaved blocks,
 * in a changing order, so that load elsewhere on the machine hits them alike; each figure is a median
 * over rounds.
 *
 *   npx tsx bench/overhead.bench.ts
 *
 * Roles of this one file: no argument = the measurement; `server` = the answering server.
 */
import { fileURLToPath } from 'node:url';
import {
  fmt,
  median,
  percentile,
  report,
  type SummaryRow,
  serveInstantApi,
  spawnInstantApi,
  table,
} from './support.js';

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

interface Contender {
  name: string;
  call: () => Promise<void>;
  /** Before and after each of its blocks and rounds: the traced contender's context manager. */
  enter?: () => void;
  leave?: (calls: number) => void;
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

/** Runs `calls` calls of `c`, between its `enter` and `leave`. */
async function turn<T>(c: Contender, calls: number, run: () => Promise<T>): Promise<T> {
  c.enter?.();
  try {
    return await run();
  } finally {
    c.leave?.(calls);
  }
}

/**
 * The two traced clients' providers. No-op: `@opentelemetry/api`'s own providers while no SDK is
 * registered (`trace.getTracerProvider()`, whose tracers are the no-op tracer, and
 * `metrics.getMeterProvider()`, the no-op meter provider), with the API's default no-op context
 * manager: what a process with the API and no SDK has. Real: a `BasicTracerProvider` with a
 * `SimpleSpanProcessor` into an `InMemorySpanExporter`, a `MeterProvider` with a metric reader, and
 * the `AsyncLocalStorageContextManager` that NodeSDK registers, which the client's spans need (it
 * follows a call by its async context). That context manager is registered only for the traced
 * contender's own turns: while registered it makes every promise in the process dearer, which would
 * colour the other contenders' figures.
 */
async function otel() {
  const { context, metrics, trace } = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { MeterProvider, MetricReader } = await import('@opentelemetry/sdk-metrics');
  const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = await import(
    '@opentelemetry/sdk-trace-base'
  );
  class Reader extends MetricReader {
    protected async onForceFlush(): Promise<void> {}
    protected async onShutdown(): Promise<void> {}
  }
  const exporter = new InMemorySpanExporter();
  const reader = new Reader();
  const manager = new AsyncLocalStorageContextManager();
  return {
    noop: { tracerProvider: trace.getTracerProvider(), meterProvider: metrics.getMeterProvider() },
    real: {
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
      meterProvider: new MeterProvider({ readers: [reader] }),
    },
    enter(): void {
      // Kept for one turn only: the memory of 40,000 calls' spans is not what is measured.
      exporter.reset();
      context.setGlobalContextManager(manager.enable());
    },
    /** Unregisters the context manager; checks that each call made its span and its attempt's. */
    leave(calls: number): void {
      context.disable();
      const spans = exporter.getFinishedSpans();
      const attempts = spans.filter((s) => s.parentSpanContext !== undefined && s.name.startsWith('POST '));
      if (spans.length !== 2 * calls || attempts.length !== calls) {
        throw new Error(`expected ${calls} calls traced, got ${spans.length} spans`);
      }
    },
    /** The metric reader's collection, so that the instruments are read as an exporter would. */
    collect: () => reader.collect(),
  };
}

async function measure(): Promise<void> {
  const { server, baseUrl: base } = await spawnInstantApi(SELF);
  try {
    const { Agent, request } = await import('undici');
    const { OAClient } = await import('../src/index.js');

    const credentials = { baseUrl: base, apiKey: 'bench-key', apiSecret: 'bench-secret' };
    const unlimited = { max: 1e9, windowMs: 60_000 };
    const withLimiter = new OAClient({
      ...credentials,
      rateLimit: { general: unlimited, upload: unlimited },
    });
    const withoutLimiter = new OAClient({ ...credentials, rateLimit: false });
    const telemetry = await otel();
    const limited = { ...credentials, rateLimit: { general: unlimited, upload: unlimited } };
    const noop = new OAClient({ ...limited, ...telemetry.noop });
    const traced = new OAClient({ ...limited, ...telemetry.real });
    const { access_token } = await withoutLimiter.generateToken();
    for (const client of [withLimiter, noop, traced]) await client.generateToken();
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
      { name: 'SDK `sendText`, no-op providers', call: sdk(noop), times: [], rates: [] },
      {
        name: 'SDK `sendText`, real SDK, in-memory export',
        call: sdk(traced),
        enter: telemetry.enter,
        leave: telemetry.leave,
        times: [],
        rates: [],
      },
    ];
    for (const c of contenders) {
      await turn(c, WARMUP_CALLS, async () => {
        for (let i = 0; i < WARMUP_CALLS; i++) await c.call();
      });
    }
    for (let block = 0; block < BLOCKS; block++) {
      for (const c of rotate(contenders, block)) {
        await turn(c, BLOCK, async () => {
          for (let i = 0; i < BLOCK; i++) {
            const t = performance.now();
            await c.call();
            c.times.push(performance.now() - t);
          }
        });
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of rotate(contenders, round)) {
        c.rates.push(await turn(c, ROUND_CALLS, () => throughput(c.call, ROUND_CALLS, IN_FLIGHT)));
      }
    }
    // The instruments recorded every call (and the gauge reads the limiter's window).
    const { resourceMetrics } = await telemetry.collect();
    const names = resourceMetrics.scopeMetrics.flatMap((s) => s.metrics.map((m) => m.descriptor.name));
    if (!names.includes('oa.client.calls') || !names.includes('oa.client.rate_limit.utilization')) {
      throw new Error(`metrics not recorded: ${names.join(', ')}`);
    }
    for (const client of [withLimiter, withoutLimiter, noop, traced]) await client.close();
    await agent.close();

    const stats = contenders.map((c) => ({
      name: c.name,
      median: median(c.times),
      p99: percentile(c.times, 0.99),
      perSecond: median(c.rates),
    }));
    type Stats = (typeof stats)[0];
    const [rawStats, onStats, offStats, noopStats, tracedStats] = stats as [
      Stats,
      Stats,
      Stats,
      Stats,
      Stats,
    ];
    const us = (ms: number) => `${fmt(ms * 1000)} µs`;
    // Tracing absent (limiter on and off) and no-op providers: the same goals against raw undici.
    const rows: SummaryRow[] = (
      [
        ['limiter on', onStats],
        ['limiter off', offStats],
        ['no-op OpenTelemetry providers', noopStats],
      ] as const
    ).flatMap(([mode, mine]) => {
      const latency = mine.median / rawStats.median;
      const rate = mine.perSecond / rawStats.perSecond;
      return [
        {
          figure: `\`sendText\` time per call, median, ${mode}`,
          sdk: us(mine.median),
          baseline: `${us(rawStats.median)} (raw undici)`,
          ratio: `${latency.toFixed(2)}x`,
          goal: `<= ${GOAL_MEDIAN_RATIO.toFixed(1)}x`,
          pass: latency <= GOAL_MEDIAN_RATIO,
        },
        {
          figure: `\`sendText\` calls per second, ${IN_FLIGHT} in flight, ${mode}`,
          sdk: `${fmt(mine.perSecond)}/s`,
          baseline: `${fmt(rawStats.perSecond)}/s (raw undici)`,
          ratio: `${rate.toFixed(2)}x`,
          goal: `>= ${GOAL_THROUGHPUT_RATIO.toFixed(1)}x`,
          pass: rate >= GOAL_THROUGHPUT_RATIO,
        },
      ];
    });
    // A real SDK: what recording two spans and four instruments per call costs, shown, with no goal
    // (it is the exporter's and the app's choice; the no-op rows above are the promise).
    const tracedOverhead = tracedStats.median - onStats.median;
    rows.push(
      {
        figure: '`sendText` tracing overhead per call, median, real SDK (in-memory export)',
        sdk: `${fmt(tracedOverhead * 1000)} µs`,
        baseline: `${us(onStats.median)} (same client, tracing absent)`,
        ratio: `${(tracedStats.median / onStats.median).toFixed(2)}x`,
      },
      {
        figure: `\`sendText\` calls per second, ${IN_FLIGHT} in flight, real SDK (in-memory export)`,
        sdk: `${fmt(tracedStats.perSecond)}/s`,
        baseline: `${fmt(onStats.perSecond)}/s (tracing absent)`,
        ratio: `${(tracedStats.perSecond / onStats.perSecond).toFixed(2)}x`,
      },
    );

    report({
      title: 'Per-call overhead',
      command: 'npx tsx bench/overhead.bench.ts',
      rows,
      details: [
        'What the SDK adds to one call: `client.sendText` (options and parameter validation, the rate',
        "limiter's slot, the token, JSON, the transport, the answer's envelope and schema, events) against a",
        'raw undici `request` with the same body and headers (`body.json()` for the answer), each with a',
        'keep-alive agent of its own, to the same node:http server (in its own process, answering at once).',
        'The SDK runs with its rate limiter on, its limits raised so that it never waits (the cost of',
        'granting a free slot), and with `rateLimit: false`, both with tracing absent (no provider passed',
        'or registered: no OpenTelemetry code runs).',
        '',
        'Tracing, limiter on: with no-op providers (`@opentelemetry/api` loaded, no SDK: its',
        '`trace.getTracerProvider()` and `metrics.getMeterProvider()` passed as `tracerProvider` and',
        "`meterProvider`, the API's default no-op context manager), held to the same goals; and with a real",
        'SDK: a `BasicTracerProvider` with a `SimpleSpanProcessor` into an `InMemorySpanExporter`, a',
        '`MeterProvider` with a metric reader, and the `AsyncLocalStorageContextManager` NodeSDK registers,',
        "registered for that contender's turns only (it makes every promise dearer while registered). Each",
        'of its turns checks that every call left its two spans (the call and its HTTP exchange), then drops',
        'them. Its overhead is its median less that of the same client with tracing absent.',
        '',
        `${fmt(WARMUP_CALLS)} warm-up calls each. Latency: ${fmt(BLOCK * BLOCKS)} sequential calls each, the`,
        `${contenders.length} taking turns in blocks of ${BLOCK}, in a rotating order. Throughput: ${ROUNDS} rounds`,
        `of ${fmt(ROUND_CALLS)} calls with ${IN_FLIGHT} in flight, taking turns; the median round.`,
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

if (process.argv[2] === 'server') serveInstantApi();
else await measure();
