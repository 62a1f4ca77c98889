import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  items,
  OAAbortError,
  OABadRequestError,
  type OAClient,
  type OAClientEventName,
  type OAClientEvents,
  OAJobBusyError,
  OARateLimitError,
  OATimeoutError,
  OATranscodeTimeoutError,
} from '../src/index.js';
import { API, clientFixture, rejection, tokensThen } from './helpers/client-fixture.js';
import { json } from './helpers/raw-server.js';

const fixture = clientFixture();
const PNG = readFileSync(new URL('./fixtures/media/sample.png', import.meta.url));
const { setup, sends } = fixture;

const TICKET = '6f1c2a4e-9b7d-4c3e-8a1f-2d5e7b9c0a13';
const tooMany = { statusCode: 429, data: 'ThrottlerException: Too Many Requests' };
const errorBody = (status: number, code: string, info: string, path: string) => ({
  statusCode: status,
  data: { statusCode: status, code, info },
  timestamp: '2026-11-22 10:00:00',
  path,
});
const converting = errorBody(
  400,
  'BAD_REQUEST',
  'Video is in convert status',
  `${API}/webhook/broadcast-video`,
);

/** Collects the client's events by name. */
function record(client: OAClient) {
  const seen = {
    request: [],
    response: [],
    retry: [],
    rateLimitWait: [],
    tokenRefresh: [],
    videoProbe: [],
  } as {
    [K in OAClientEventName]: OAClientEvents[K][];
  };
  for (const name of Object.keys(seen) as OAClientEventName[]) {
    client.on(name, (event) => (seen[name] as unknown[]).push(event));
  }
  return seen;
}

/** Arrival times (ms) of the requests that were not token calls. */
const arrivals = () => sends().map((hit) => hit.at);

describe('429: the wait the server asks for', () => {
  it('Retry-After in seconds: the retry comes no sooner, and the message is delivered once', async () => {
    let calls = 0;
    const { client } = await setup(
      tokensThen((_req, res) =>
        ++calls === 1 ? json(res, 429, tooMany, { 'retry-after': '1' }) : json(res, 201, { data: 'success' }),
      ),
    );
    const events = record(client);
    expect(await client.sendText({ user_id: 'u1', msg: 'x' })).toBe('success');
    const [first, second] = arrivals();
    expect(second! - first!).toBeGreaterThanOrEqual(990);
    expect(events.retry).toMatchObject([{ reason: 'rate_limited', waitMs: 1000, endpoint: 'sendText' }]);
    expect(sends()).toHaveLength(2);
  });

  it('Retry-After as an HTTP date is honoured too', async () => {
    let calls = 0;
    const { client } = await setup(
      tokensThen((_req, res) => {
        if (++calls > 1) return json(res, 201, { data: 'success' });
        // Two seconds ahead, at second resolution: the wait is between 1 and 2 s.
        json(res, 429, tooMany, { 'retry-after': new Date(Date.now() + 2000).toUTCString() });
      }),
    );
    expect(await client.sendText({ user_id: 'u1', msg: 'x' })).toBe('success');
    const [first, second] = arrivals();
    expect(second! - first!).toBeGreaterThanOrEqual(950);
  });

  it('without Retry-After: backoff, and these retries do not use up maxRetries', async () => {
    let calls = 0;
    const { client } = await setup(
      tokensThen((_req, res) =>
        ++calls <= 3 ? json(res, 429, tooMany) : json(res, 201, { data: 'success' }),
      ),
      { maxRetries: 1 },
    );
    const events = record(client);
    expect(await client.sendText({ user_id: 'u1', msg: 'x' })).toBe('success');
    expect(events.retry.map((r) => r.reason)).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);
    // 1 s doubling, with jitter between half and all of each step.
    const waits = events.retry.map((r) => r.waitMs);
    expect(waits[0]).toBeGreaterThanOrEqual(500);
    expect(waits[0]).toBeLessThanOrEqual(1000);
    expect(waits[2]).toBeGreaterThanOrEqual(2000);
    expect(sends()).toHaveLength(4);
  });

  it('gives up with OARateLimitError once maxBusyWaitMs would be passed', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 429, tooMany, { 'retry-after-ms': '400' })),
      { maxBusyWaitMs: 1000 },
    );
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OARateLimitError);
    expect(error.deliveryUnknown).toBe(false);
    // Waits of 400 + 400 fit in 1000 ms; a third would not.
    expect(sends()).toHaveLength(3);
  });

  it('maxRetries: 0 turns every retry off', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 429, tooMany, { 'retry-after-ms': '10' })),
      {
        maxRetries: 0,
      },
    );
    expect(await rejection(client.sendText({ user_id: 'u1', msg: 'x' }))).toBeInstanceOf(OARateLimitError);
    expect(sends()).toHaveLength(1);
  });
});

describe('JOB_BUSY on the mass broadcasts', () => {
  const record_ = {
    id: 'b-1',
    data: [{ type: 'message', msg: 'x' }],
    broadcast_at: '2026-11-22 10:00:00',
    created_at: '2026-11-22 10:00:00',
    estimate_time_detail: { total_job_time_minutes: 1 },
  };

  it('waits with backoff while a job runs, then broadcasts once', async () => {
    let calls = 0;
    const path = `${API}/message/broadcast-message`;
    const { client } = await setup(
      tokensThen((_req, res) =>
        ++calls <= 2
          ? json(res, 400, errorBody(400, 'JOB_BUSY', 'A broadcast job is in progress', path))
          : json(res, 201, { data: record_ }),
      ),
    );
    const events = record(client);
    const result = await client.broadcast({ target: 'all', items: [items.text('x')] });
    expect(result.id).toBe('b-1');
    expect(events.retry.map((r) => r.reason)).toEqual(['job_busy', 'job_busy']);
    const [a, b, c] = arrivals();
    expect(b! - a!).toBeGreaterThanOrEqual(450);
    expect(c! - b!).toBeGreaterThanOrEqual(950);
  });

  it('is bounded: OAJobBusyError when maxBusyWaitMs runs out', async () => {
    const path = `${API}/message/broadcast-group-message`;
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 400, errorBody(400, 'JOB_BUSY', 'busy', path))),
      { maxBusyWaitMs: 2500 },
    );
    const events = record(client);
    const started = Date.now();
    const error = await rejection(
      client.broadcastToGroup({ account_provider_group_id: TICKET, items: [items.text('x')] }),
    );
    expect(error).toBeInstanceOf(OAJobBusyError);
    // The waits add up to at most maxBusyWaitMs; the requests' own time comes on top of it.
    const waited = events.retry.reduce((sum, r) => sum + r.waitMs, 0);
    expect(events.retry.length).toBeGreaterThanOrEqual(1);
    expect(waited).toBeLessThanOrEqual(2500);
    expect(Date.now() - started).toBeLessThan(2500 + 1500);
    expect(sends().length).toBe(events.retry.length + 1);
  });
});

describe('sendVideo waits for the transcode', () => {
  it('tries again while the ticket converts, then sends once', async () => {
    let calls = 0;
    const { client } = await setup(
      tokensThen((_req, res) =>
        ++calls <= 2 ? json(res, 400, converting) : json(res, 201, { data: 'success' }),
      ),
    );
    const events = record(client);
    expect(await client.sendVideo({ user_id: 'u1', ticket_id: TICKET })).toBe('success');
    expect(events.retry.map((r) => r.reason)).toEqual(['video_converting', 'video_converting']);
    expect(events.retry[0]!.waitMs).toBeGreaterThanOrEqual(250);
    expect(sends()).toHaveLength(3);
  });

  it('gives up with OATranscodeTimeoutError after waitForTranscode.timeoutMs', async () => {
    const { client } = await setup(tokensThen((_req, res) => json(res, 400, converting)));
    const started = Date.now();
    const error = await rejection(
      client.sendVideo({ user_id: 'u1', ticket_id: TICKET }, { waitForTranscode: { timeoutMs: 1500 } }),
    );
    expect(error).toBeInstanceOf(OATranscodeTimeoutError);
    expect(error).toMatchObject({ ticket_id: TICKET });
    expect(error.cause).toBeInstanceOf(OABadRequestError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('waitForTranscode: false fails at once with the API error', async () => {
    const { client } = await setup(tokensThen((_req, res) => json(res, 400, converting)));
    const error = await rejection(
      client.sendVideo({ user_id: 'u1', ticket_id: TICKET }, { waitForTranscode: false }),
    );
    expect(error).toBeInstanceOf(OABadRequestError);
    expect(error).toMatchObject({ info: 'Video is in convert status' });
    expect(sends()).toHaveLength(1);
  });

  it('another 400 is not waited for', async () => {
    const path = `${API}/webhook/broadcast-video`;
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 400, errorBody(400, 'BAD_REQUEST', 'ticket not found', path))),
    );
    expect(await rejection(client.sendVideo({ user_id: 'u1', ticket_id: TICKET }))).toBeInstanceOf(
      OABadRequestError,
    );
    expect(sends()).toHaveLength(1);
  });

  it('an abort ends the wait at once', async () => {
    const { client } = await setup(tokensThen((_req, res) => json(res, 400, converting)));
    const controller = new AbortController();
    const pending = rejection(
      client.sendVideo({ user_id: 'u1', ticket_id: TICKET }, { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const error = await pending;
    expect(error).toBeInstanceOf(OAAbortError);
    expect(error.message).toContain('transcode');
    // Ended by the abort at 300 ms, not by the transcode wait's own bound (the margin is for a loaded machine).
    expect(Date.now() - started).toBeLessThan(1_200);
  });
});

describe('the rate limiter queue', () => {
  it('an abort while queued rejects at once and sends nothing', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 201, { data: 'success' })),
      { rateLimit: { general: { max: 2, windowMs: 60_000 } } },
    );
    // The token call and the first send use the two slots; the second send queues.
    await client.sendText({ user_id: 'u1', msg: 'first' });
    const controller = new AbortController();
    const events = record(client);
    const pending = rejection(
      client.sendText({ user_id: 'u1', msg: 'second' }, { signal: controller.signal }),
    );
    setTimeout(() => controller.abort(new Error('no longer needed')), 200);
    const error = await pending;
    expect(error).toBeInstanceOf(OAAbortError);
    expect(error.message).toContain('rate limit');
    expect(error.deliveryUnknown).toBe(false);
    expect(sends()).toHaveLength(1);
    expect(events.request).toHaveLength(0);
  });

  it('an upload that gives up while waiting for its general slot leaves no slot behind', async () => {
    const { client } = await setup(
      tokensThen((_req, res) =>
        json(res, 201, {
          data: _req.url?.includes('/upload/')
            ? { src_file: 'a.png', url: 'https://x.example/a.png' }
            : 'success',
        }),
      ),
      { rateLimit: { general: { max: 2, windowMs: 1000 }, upload: { max: 5, windowMs: 1000 } } },
    );
    const started = Date.now();
    await client.sendText({ user_id: 'u1', msg: 'first' }); // the login and this send use both slots
    const upload = rejection(client.uploadImage(PNG, { signal: AbortSignal.timeout(200) }));
    expect(await upload).toBeInstanceOf(OAAbortError);
    // Both slots come back about a second after they were used, and both go to these two sends.
    await Promise.all([
      client.sendText({ user_id: 'u1', msg: 'second' }),
      client.sendText({ user_id: 'u1', msg: 'third' }),
    ]);
    expect(Date.now() - started).toBeLessThan(1800);
    expect(sends().filter((hit) => hit.path.includes('/upload/'))).toHaveLength(0);
  });

  it('a per-call timeoutMs bounds the time queued: OATimeoutError, not sent, not retried', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 201, { data: 'success' })),
      { rateLimit: { general: { max: 2, windowMs: 60_000 } } },
    );
    await client.sendText({ user_id: 'u1', msg: 'first' });
    const started = Date.now();
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'second' }, { timeoutMs: 300 }));
    expect(error).toBeInstanceOf(OATimeoutError);
    expect(error.message).toContain('not sent');
    expect(error.deliveryUnknown).toBe(false);
    expect(Date.now() - started).toBeLessThan(1500);
    // An upload from a stream that times out in the queue: nothing was sent, nothing to explain.
    const upload = await rejection(client.uploadImage(Readable.from([PNG]), { timeoutMs: 300 }));
    expect(upload).toBeInstanceOf(OATimeoutError);
    expect(upload.message).not.toContain('not retried');
    expect(sends()).toHaveLength(1);
  });

  it('a per-call timeoutMs shorter than the wait a 429 asks for: the 429 goes back at once', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 429, tooMany, { 'retry-after': '5' })),
    );
    const started = Date.now();
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 1000 }));
    expect(error).toBeInstanceOf(OARateLimitError);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sends()).toHaveLength(1);
  });

  it('a backoff sleep is cut short by an abort', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 429, tooMany, { 'retry-after': '30' })),
    );
    const started = Date.now();
    const error = await rejection(
      client.sendText({ user_id: 'u1', msg: 'x' }, { signal: AbortSignal.timeout(300) }),
    );
    expect(error).toBeInstanceOf(OAAbortError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('requests wait for their slot and report it', async () => {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 201, { data: 'success' })),
      { rateLimit: { general: { max: 3, windowMs: 1000 } } },
    );
    const events = record(client);
    const started = Date.now();
    await Promise.all([1, 2, 3, 4, 5].map((n) => client.sendText({ user_id: 'u1', msg: `m${n}` })));
    // 6 requests (a login and 5 sends) at 3 per second: the last 3 wait about a second.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(events.rateLimitWait.length).toBeGreaterThanOrEqual(3);
    expect(events.rateLimitWait[0]).toMatchObject({ bucket: 'general', endpoint: 'sendText' });
    const times = arrivals();
    expect(times[3]! - times[0]!).toBeGreaterThanOrEqual(1000);
  });
});

describe('events and the logger', () => {
  it('report request, response, token refresh and retries, never a secret', async () => {
    let calls = 0;
    const lines: string[] = [];
    const log = (message: string, details?: unknown) =>
      lines.push(`${message} ${JSON.stringify(details ?? {})}`);
    const { client } = await setup(
      tokensThen((_req, res) =>
        ++calls === 1
          ? json(res, 429, tooMany, { 'retry-after-ms': '120' })
          : json(res, 201, { data: 'success' }),
      ),
      { logger: { debug: log, info: log, warn: log, error: log } },
    );
    const events = record(client);
    await client.sendText({ user_id: 'u1', msg: 'x' });
    expect(events.tokenRefresh).toEqual([{ kind: 'login', reason: 'no_token' }]);
    expect(events.request.map((e) => e.endpoint)).toEqual(['generateToken', 'sendText', 'sendText']);
    expect(events.response.map((e) => e.status)).toEqual([201, 429, 201]);
    expect(events.retry).toMatchObject([{ reason: 'rate_limited', attempt: 1, waitMs: 120 }]);
    const all = lines.join('\n');
    expect(all).toContain('retrying in 120 ms');
    expect(all).not.toContain('secret-abcdef');
    expect(all).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
  });

  it('a listener that throws does not break the call', async () => {
    const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
    client.on('request', () => {
      throw new Error('listener bug');
    });
    await expect(client.sendText({ user_id: 'u1', msg: 'x' })).resolves.toBe('success');
  });
});
