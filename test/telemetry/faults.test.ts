// Telemetry that throws changes nothing: a span processor whose onStart or onEnd throws, or metric
// instruments that throw on add/record (the real OpenTelemetry SDKs, made to fail), passed to a client
// or registered globally. The client's sends, the webhook's answer and an outbox job end as they would
// without telemetry, against the fake server and a real redis-server on loopback; each part reports the
// fault once, through its logger (or as a process warning where it has none).
import { metrics, trace } from '@opentelemetry/api';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OAConnectionError, type OAError } from '../../src/index.js';
import { createOutbox, type Outbox } from '../../src/queue/index.js';
import { sendInboundMessage } from '../../src/testing/index.js';
import { createWebhookHandler } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { mockServerFixture } from '../testing/support.js';
import { recordingLogger } from '../webhook/support.js';
import { useContext } from './otel.js';

const fixture = mockServerFixture();
const SEND = '/webhook/broadcast-message';

/** What fails, by span name (a pattern), and whether metric instruments throw. */
interface Faults {
  start?: RegExp | undefined;
  end?: RegExp | undefined;
  instruments?: boolean | undefined;
}

/** A span processor that throws where `faults` says; the spans it let through end up in `ended`. */
class FaultyProcessor implements SpanProcessor {
  faults: Faults = {};
  readonly ended: string[] = [];
  onStart(span: Span): void {
    if (this.faults.start?.test(span.name)) throw new Error(`onStart broke on ${span.name}`);
  }
  onEnd(span: { name: string }): void {
    if (this.faults.end?.test(span.name)) throw new Error(`onEnd broke on ${span.name}`);
    this.ended.push(span.name);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** Real SDK providers: spans through `processor`, metrics through a view whose attribute step throws. */
function faultyProviders(processor: FaultyProcessor) {
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [processor] });
  const meterProvider = new MeterProvider({
    views: [
      {
        instrumentName: '*',
        attributesProcessors: [
          {
            process(attributes) {
              if (processor.faults.instruments) throw new Error('the metric instrument broke');
              return attributes;
            },
          },
        ],
      },
    ],
  });
  return { tracerProvider, meterProvider };
}

/** The log lines about telemetry. */
const telemetryLines = (lines: { level: string; message: string }[]) =>
  lines.filter((l) => /telemetry/i.test(l.message));

// The global providers (the webhook's and the queue's telemetry use those), failing as each test says.
const global = new FaultyProcessor();
beforeAll(() => {
  useContext();
  const { tracerProvider, meterProvider } = faultyProviders(global);
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
});
afterAll(() => {
  trace.disable();
  metrics.disable();
});
afterEach(() => {
  global.faults = {};
});

describe('a client with telemetry that throws', () => {
  const setup = async (faults: Faults) => {
    const fake = await fixture.start();
    const processor = new FaultyProcessor();
    processor.faults = faults;
    const { lines, logger } = recordingLogger();
    const client = fixture.connect(fake, { ...faultyProviders(processor), logger });
    return { fake, client, lines, processor };
  };

  it("sendText resolves 'success' when onEnd throws for oa sendText, and says so once", async () => {
    const { fake, client, lines, processor } = await setup({ end: /^oa sendText$/ });
    expect(await client.sendText({ user_id: 'user-1', msg: 'one' })).toBe('success');
    expect(await client.sendText({ user_id: 'user-1', msg: 'two' })).toBe('success');
    expect(fake.deliveries).toHaveLength(2);
    // The spans that did not throw still ended.
    expect(processor.ended).toContain(`POST /api/v2/public${SEND}`);
    expect(telemetryLines(lines)).toHaveLength(1);
    expect(telemetryLines(lines)[0]?.level).toBe('warn');
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('a send whose onStart throws (every span) still goes out, once', async () => {
    const { fake, client, lines } = await setup({ start: /./ });
    expect(await client.sendText({ user_id: 'user-1', msg: 'hi' })).toBe('success');
    expect(fake.deliveries).toHaveLength(1);
    expect(telemetryLines(lines)).toHaveLength(1);
  });

  it('instruments that throw on add and record: the send resolves', async () => {
    const { fake, client, lines } = await setup({ instruments: true });
    fake.injectFault({ kind: 'rate-limit', retryAfterSeconds: 1 }, { path: SEND });
    expect(await client.sendText({ user_id: 'user-1', msg: 'hi' })).toBe('success');
    expect(fake.deliveries).toHaveLength(1);
    expect(telemetryLines(lines)).toHaveLength(1);
  });

  it('a send of unknown outcome keeps its error (deliveryUnknown) when every onEnd and add throws', async () => {
    const { fake, client } = await setup({ end: /./, instruments: true });
    fake.injectFault('reset-after-processing', { path: SEND });
    const error = await client.sendText({ user_id: 'user-1', msg: 'hi' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAConnectionError);
    expect((error as OAError).deliveryUnknown).toBe(true);
  });
});

describe('a webhook handler with a global tracer that throws', () => {
  it("answers 200 and runs onEvent once when the 'oa webhook' span's onEnd throws", async () => {
    global.faults = { end: /^oa webhook$/, instruments: true };
    const { lines, logger } = recordingLogger();
    let ran = 0;
    const handler = createWebhookHandler({
      onEvent: () => {
        ran++;
      },
      logger,
    });
    const server = await listen((req, res) => void handler(req, res));
    try {
      const first = await sendInboundMessage(server.url, 'hello', { from: 'user_7', timeoutMs: 3000 });
      expect(first.status).toBe(200);
      expect(ran).toBe(1);
      const second = await sendInboundMessage(server.url, 'again', { from: 'user_7', timeoutMs: 3000 });
      expect(second.status).toBe(200);
      expect(ran).toBe(2);
      expect(telemetryLines(lines)).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('answers 200 when startSpan throws (onStart)', async () => {
    global.faults = { start: /./ };
    let ran = 0;
    const handler = createWebhookHandler({
      onEvent: () => {
        ran++;
      },
    });
    const server = await listen((req, res) => void handler(req, res));
    try {
      expect((await sendInboundMessage(server.url, 'hello', { timeoutMs: 3000 })).status).toBe(200);
      expect(ran).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe.skipIf(!REDIS_SERVER)('an outbox with a global tracer and meter that throw', () => {
  const shared = useRedisServer();

  /** Polls the job until it has ended, for at most 15 s. */
  async function ended(outbox: Outbox, key: string): ReturnType<Outbox['get']> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const entry = await outbox.get(key);
      const state = entry?.state;
      if (state === 'delivered' || state === 'failed' || state === 'unknown' || Date.now() > deadline) {
        return entry;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it("a job ends 'delivered', sent once, when onEnd throws for every span (and the counters throw)", async () => {
    const fake = await fixture.start();
    const client = fixture.connect(fake, { maxRetries: 0 });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'faulty-telemetry' });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.message);
    process.on('warning', onWarning);
    const worker = outbox.work({ client });
    try {
      global.faults = { end: /./, instruments: true };
      await outbox.add('sendText', { user_id: 'u1', msg: 'first' }, { key: 'one' });
      expect(await ended(outbox, 'one')).toEqual({ state: 'delivered', result: 'success' });
      global.faults = { start: /./ };
      await outbox.add('sendText', { user_id: 'u1', msg: 'second' }, { key: 'two' });
      expect(await ended(outbox, 'two')).toEqual({ state: 'delivered', result: 'success' });
      expect(fake.deliveries).toHaveLength(2);
      // The queue has no logger: one process warning tells of it.
      expect(warnings.filter((w) => /telemetry/i.test(w))).toHaveLength(1);
    } finally {
      process.off('warning', onWarning);
      await worker.close();
      await outbox.close();
    }
  });
});
