// A client's spans and metrics through OpenTelemetry, read back from the SDK's in-memory exporter and
// a metric reader, against the fake server on loopback.
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';
import { type OAClient, OAConfigError } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { mockServerFixture } from '../testing/support.js';
import { everyAttributeValue, everyMetricAttributeValue, telemetry, useContext } from './otel.js';

const fixture = mockServerFixture();
const SEND = '/webhook/broadcast-message';
const TEXT = 'Your parcel 4711 is on its way';

beforeAll(useContext);

async function setup() {
  const fake = await fixture.start();
  const otel = telemetry();
  const client = fixture.connect(fake, {
    tracerProvider: otel.tracerProvider,
    meterProvider: otel.meterProvider,
  });
  return { fake, otel, client };
}

const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) =>
  spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);

/**
 * Nothing exported (span, event and link attributes, metric attributes) holds the api secret, a token
 * the fake issued (access tokens it saw, refresh tokens sent back to it, and a pair taken now) or the
 * message text.
 */
async function expectNoSecrets(otel: ReturnType<typeof telemetry>, fake: MockServer, client: OAClient) {
  const pair = await client.generateToken();
  const values = [
    ...everyAttributeValue(otel.spans()),
    ...everyMetricAttributeValue(await otel.metrics()),
  ].join('\n');
  const tokens = fake.requests.flatMap((r) => [
    (r.headers.authorization as string | undefined)?.replace('Bearer ', ''),
    (r.body as { refresh_token?: string } | undefined)?.refresh_token,
  ]);
  const issued = [...tokens, pair.access_token, pair.refresh_token].filter(
    (t): t is string => typeof t === 'string' && t.length > 0,
  );
  expect(issued.length).toBeGreaterThan(2);
  for (const secret of [fake.apiSecret, ...issued, TEXT]) expect(values).not.toContain(secret);
  expect(values).not.toMatch(/eyJ[\w-]+\.[\w-]+/); // no JWT at all
}

describe('tracing a client', () => {
  it('one CLIENT span per call; a 429 then a success: two attempt spans and an oa.retry event', async () => {
    const { fake, otel, client } = await setup();
    fake.injectFault({ kind: 'rate-limit', retryAfterSeconds: 1 }, { path: SEND });
    await client.sendText({ user_id: 'user-1', msg: TEXT });

    const spans = otel.spans();
    const [call] = named(spans, 'oa sendText');
    expect(named(spans, 'oa sendText')).toHaveLength(1);
    expect(call?.kind).toBe(2); // SpanKind.CLIENT
    expect(call?.status.code).not.toBe(2);
    expect(call?.attributes).toMatchObject({
      'oa.method': 'sendText',
      'oa.endpoint': `/api/v2/public${SEND}`,
      'oa.attempts': 2,
      'oa.delivery_unknown': false,
      'http.response.status_code': 201,
    });
    expect(call?.attributes['oa.request_id']).toEqual(expect.any(String));
    const retry = call?.events.find((e) => e.name === 'oa.retry');
    expect(retry?.attributes).toMatchObject({ 'oa.retry.reason': 'rate_limited', 'oa.wait_ms': 1000 });
    const attempts = childrenOf(spans, call as ReadableSpan).filter((s) => s.name.startsWith('POST '));
    expect(attempts.map((a) => a.attributes['http.response.status_code'])).toEqual([429, 201]);
    expect(attempts[1]?.attributes['http.request.resend_count']).toBe(1);
    // The first call logged in: its renewal is a child span of its own.
    expect(childrenOf(spans, call as ReadableSpan).map((s) => s.name)).toContain('oa token');
    await expectNoSecrets(otel, fake, client);

    expect(await otel.points('oa.client.calls')).toContainEqual({
      attributes: { 'oa.method': 'sendText', 'oa.outcome': 'ok' },
      value: 1,
    });
    expect(await otel.points('oa.client.retries')).toContainEqual({
      attributes: { 'oa.method': 'sendText', 'oa.retry.reason': 'rate_limited' },
      value: 1,
    });
    const durations = await otel.points('oa.client.attempt.duration');
    expect(durations.filter((d) => d.attributes['oa.method'] === 'sendText').map((d) => d.value)).toEqual([
      1, 1,
    ]);
    const utilisation = await otel.points('oa.client.rate_limit.utilization');
    expect(
      utilisation.find((u) => u.attributes['oa.rate_limit.bucket'] === 'general')?.value,
    ).toBeGreaterThan(0);
  });

  it('a 401: the token is renewed in an oa token span and the request replayed', async () => {
    const { fake, otel, client } = await setup();
    await client.sendText({ user_id: 'user-1', msg: TEXT });
    fake.injectFault(401, { path: SEND });
    await client.sendText({ user_id: 'user-1', msg: TEXT });

    const spans = otel.spans();
    const second = named(spans, 'oa sendText')[1] as ReadableSpan;
    expect(second.attributes['oa.attempts']).toBe(2);
    expect(second.events.map((e) => [e.name, e.attributes?.['oa.retry.reason']])).toEqual([
      ['oa.retry', 'unauthorized'],
    ]);
    const children = childrenOf(spans, second);
    expect(children.map((s) => s.name)).toEqual([
      `POST /api/v2/public${SEND}`,
      'oa token',
      `POST /api/v2/public${SEND}`,
    ]);
    const token = children[1] as ReadableSpan;
    // The renewal's own exchange is under it.
    expect(childrenOf(spans, token).map((s) => s.name)).toEqual([
      expect.stringMatching(/^POST \/api\/v2\/public\/auth\//),
    ]);
    await expectNoSecrets(otel, fake, client);
  });

  it('a send whose outcome is unknown: ERROR, oa.delivery_unknown, the error recorded by class', async () => {
    const { fake, otel, client } = await setup();
    fake.injectFault('reset-after-processing', { path: SEND });
    const error = await client.sendText({ user_id: 'user-1', msg: TEXT }).catch((e: unknown) => e);
    expect((error as { deliveryUnknown?: boolean }).deliveryUnknown).toBe(true);

    const spans = otel.spans();
    const call = named(spans, 'oa sendText')[0] as ReadableSpan;
    expect(call.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(call.attributes).toMatchObject({
      'oa.attempts': 1,
      'oa.delivery_unknown': true,
      'oa.error.class': 'outcome_unknown',
      'error.type': 'OAConnectionError',
    });
    expect(call.events.find((e) => e.name === 'exception')?.attributes?.['exception.type']).toBe(
      'OAConnectionError',
    );
    const [attempt] = childrenOf(spans, call).filter((s) => s.name.startsWith('POST '));
    expect(attempt?.status.code).toBe(2);
    await expectNoSecrets(otel, fake, client);
    expect(await otel.points('oa.client.calls')).toContainEqual({
      attributes: { 'oa.method': 'sendText', 'oa.outcome': 'outcome_unknown' },
      value: 1,
    });
  });

  it('a tracer without a meter traces each attempt; a meter without a tracer counts each call', async () => {
    const fake = await fixture.start();
    const traced = telemetry();
    const metered = telemetry();
    const onlyTraced = fixture.connect(fake, { tracerProvider: traced.tracerProvider });
    const onlyMetered = fixture.connect(fake, { meterProvider: metered.meterProvider });
    fake.injectFault({ kind: 'rate-limit', retryAfterSeconds: 1 }, { path: SEND, times: 1 });
    await onlyTraced.sendText({ user_id: 'user-1', msg: TEXT });
    await onlyMetered.sendText({ user_id: 'user-1', msg: TEXT });

    const spans = traced.spans();
    const [call] = named(spans, 'oa sendText');
    expect(call?.attributes).toMatchObject({ 'oa.attempts': 2, 'http.response.status_code': 201 });
    expect(childrenOf(spans, call as ReadableSpan).filter((s) => s.name.startsWith('POST '))).toHaveLength(2);
    expect(await traced.points('oa.client.calls')).toEqual([]);

    expect(metered.spans()).toEqual([]);
    expect(await metered.points('oa.client.calls')).toContainEqual({
      attributes: { 'oa.method': 'sendText', 'oa.outcome': 'ok' },
      value: 1,
    });
    expect(await metered.points('oa.client.attempt.duration')).toContainEqual(
      expect.objectContaining({ value: 1 }),
    );
  });

  it('refuses a tracerProvider or meterProvider that is not one', async () => {
    const fake = await fixture.start();
    expect(() => fixture.connect(fake, { tracerProvider: {} as never })).toThrow(OAConfigError);
    expect(() => fixture.connect(fake, { meterProvider: { getMeter: 1 } as never })).toThrow(
      /meterProvider must be/,
    );
  });
});
