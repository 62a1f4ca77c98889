import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  isOAError,
  items,
  OAApiError,
  OABadRequestError,
  type OAClientOptions,
  OAInternalServerError,
  OAJobBusyError,
  OANotFoundError,
  OARateLimitError,
  OAResponseValidationError,
  OAUnauthorizedError,
} from '../src/index.js';
import { API, clientFixture, rejection, tokensThen } from './helpers/client-fixture.js';
import { json, type RawHandler } from './helpers/raw-server.js';
import { tokenPair } from './helpers/tokens.js';

const SECRET = 'very-secret-value-42';
const fixture = clientFixture({ apiSecret: SECRET, maxRetries: 2 });
const { sends } = fixture;

/** A server that hands out tokens and answers every other path with `answer`. */
const setup = (answer: RawHandler, options: Partial<OAClientOptions> = {}) =>
  fixture.setup(tokensThen(answer), options);

const errorEnvelope = (status: number, code: string, info: string, path: string) => ({
  statusCode: status,
  data: { statusCode: status, code, info },
  timestamp: '2026-11-22 10:00:00',
  path,
});

describe('error answers map to their classes', () => {
  it('400 BAD_REQUEST inside data: OABadRequestError with every field, not retried', async () => {
    const path = `${API}/webhook/broadcast-video`;
    const body = errorEnvelope(400, 'BAD_REQUEST', 'Video is in convert status', path);
    const { client } = await setup((_req, res) => json(res, 400, body));
    const error = await rejection(
      client.sendVideo(
        { user_id: 'u1', ticket_id: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d' },
        { waitForTranscode: false },
      ),
    );
    expect(error).toBeInstanceOf(OABadRequestError);
    expect(error).toMatchObject({
      name: 'OABadRequestError',
      status: 400,
      code: 'BAD_REQUEST',
      info: 'Video is in convert status',
      path,
      timestamp: '2026-11-22 10:00:00',
      body,
      deliveryUnknown: false,
    });
    expect(error.message).toBe(`400 BAD_REQUEST: Video is in convert status (POST ${path})`);
    expect(sends()).toHaveLength(1);
  });

  it('400 BAD_REQUEST at the top level (the audio layout): OABadRequestError', async () => {
    const body = { statusCode: 400, code: 'BAD_REQUEST', info: 'Invalid audio file type: text/plain' };
    const { client } = await setup((_req, res) => json(res, 400, body));
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OABadRequestError);
    expect(error).toMatchObject({ code: 'BAD_REQUEST', info: 'Invalid audio file type: text/plain', body });
  });

  it('400 JOB_BUSY: OAJobBusyError once the retries are spent', async () => {
    const path = `${API}/message/broadcast-message`;
    const { client } = await setup(
      (_req, res) => json(res, 400, errorEnvelope(400, 'JOB_BUSY', 'Job busy', path)),
      {
        maxRetries: 0,
      },
    );
    const error = await rejection(client.broadcast({ target: 'all', items: [items.text('x')] }));
    expect(error).toBeInstanceOf(OAJobBusyError);
    expect(error).toBeInstanceOf(OAApiError);
    expect(error).toMatchObject({ status: 400, code: 'JOB_BUSY', info: 'Job busy' });
  });

  it('404 NOT_FOUND on the greeting: OANotFoundError', async () => {
    const path = `${API}/webhook/broadcast-greeting`;
    const { client } = await setup((_req, res) =>
      json(res, 404, errorEnvelope(404, 'NOT_FOUND', 'Account provider not found', path)),
    );
    const error = await rejection(client.sendGreeting({ user_id: 'u1' }));
    expect(error).toBeInstanceOf(OANotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'NOT_FOUND', info: 'Account provider not found' });
  });

  it('429 with a plain-string data: OARateLimitError with info and retryAfterMs', async () => {
    const path = `${API}/webhook/broadcast-message`;
    const body = {
      statusCode: 429,
      data: 'ThrottlerException: Too Many Requests',
      timestamp: '2026-11-22 10:00:00',
      path,
    };
    const { client } = await setup((_req, res) => json(res, 429, body, { 'retry-after': '7' }), {
      maxRetries: 0,
    });
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OARateLimitError);
    expect(error).toMatchObject({
      status: 429,
      code: undefined,
      info: 'ThrottlerException: Too Many Requests',
      retryAfterMs: 7000,
      deliveryUnknown: false,
    });
  });

  it('429 with Retry-After as an HTTP date: retryAfterMs counts to that date', async () => {
    const when = new Date(Date.now() + 30_000).toUTCString();
    const { client } = await setup(
      (_req, res) => json(res, 429, { statusCode: 429, data: 'Too Many Requests' }, { 'retry-after': when }),
      {
        maxRetries: 0,
      },
    );
    const error = (await rejection(client.sendText({ user_id: 'u1', msg: 'x' }))) as OARateLimitError;
    expect(error.retryAfterMs).toBeGreaterThan(28_000);
    expect(error.retryAfterMs).toBeLessThanOrEqual(30_000);
  });

  it('429 asking for more than a minute is not waited for', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 429, { statusCode: 429, data: 'Too Many Requests' }, { 'retry-after': '3600' }),
    );
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toMatchObject({ name: 'OARateLimitError', retryAfterMs: 3_600_000 });
    expect(sends()).toHaveLength(1);
  });

  it('429 is retried after retry-after-ms and the message is delivered once', async () => {
    let calls = 0;
    const { client } = await setup((_req, res) => {
      calls++;
      if (calls === 1)
        return json(res, 429, { statusCode: 429, data: 'Too Many Requests' }, { 'retry-after-ms': '30' });
      return json(res, 201, { data: 'success' });
    });
    expect(await client.sendText({ user_id: 'u1', msg: 'x' })).toBe('success');
    expect(sends()).toHaveLength(2);
  });

  it('500 on a send: OAInternalServerError with deliveryUnknown, never retried', async () => {
    const path = `${API}/webhook/broadcast-message`;
    const { client } = await setup((_req, res) =>
      json(res, 500, errorEnvelope(500, 'INTERNAL_SERVER_ERROR', 'Internal error', path)),
    );
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OAInternalServerError);
    expect(error).toMatchObject({ status: 500, code: 'INTERNAL_SERVER_ERROR', deliveryUnknown: true });
    expect(sends()).toHaveLength(1);
  });

  it("a proxy's HTML 502: OAInternalServerError whose info is the page title", async () => {
    const html =
      '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';
    const { client } = await setup((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' }).end(html);
    });
    const error = await rejection(client.broadcast({ target: 'all', items: [items.text('x')] }));
    expect(error).toBeInstanceOf(OAInternalServerError);
    expect(error).toMatchObject({
      status: 502,
      code: undefined,
      info: '502 Bad Gateway',
      body: html,
      deliveryUnknown: true,
    });
  });

  it('an undocumented status: the OAApiError base class', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 403, { statusCode: 403, message: 'Forbidden resource' }),
    );
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error.constructor).toBe(OAApiError);
    expect(error).toMatchObject({ status: 403, info: 'Forbidden resource' });
  });

  it('a 401 that survives one refresh: OAUnauthorizedError', async () => {
    const { client } = await setup((req, res) => {
      if (req.url === `${API}/auth/refresh-token`) return json(res, 201, { data: tokenPair(2) });
      return json(res, 401, {
        statusCode: 401,
        data: { statusCode: 401, code: 'UNAUTHORIZED', info: 'Unauthorized' },
      });
    });
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OAUnauthorizedError);
    expect(sends().filter((h) => h.path.endsWith('broadcast-message'))).toHaveLength(2);
  });
});

describe('2xx answers that break the schema: OAResponseValidationError', () => {
  it('a missing required field', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 201, {
        data: {
          data: [],
          broadcast_at: 'x',
          created_at: 'y',
          estimate_time_detail: { total_job_time_minutes: 1 },
        },
      }),
    );
    const error = await rejection(client.broadcast({ target: 'all', items: [items.text('x')] }));
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expect((error as OAResponseValidationError).issues[0]?.path).toEqual(['data', 'id']);
    expect(error.message).toContain('data.id');
  });

  it('a wrongly typed field', async () => {
    const { client } = await setup((_req, res) =>
      json(res, 200, {
        data: {
          id: 'b',
          data: [],
          broadcast_at: 'x',
          created_at: 'y',
          estimate_time_detail: { total_job_time_minutes: '1' },
        },
      }),
    );
    const error = await rejection(
      client.broadcastToGroup({
        account_provider_group_id: '0b5c9f4e-3a8e-4c59-9d1e-2f3a4b5c6d7e',
        items: [items.text('x')],
      }),
    );
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expect(error.message).toContain('data.estimate_time_detail.total_job_time_minutes');
  });

  it('a body that is not JSON', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('OK');
    });
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expect(error).toMatchObject({ status: 200, body: 'OK' });
    expect(sends()).toHaveLength(1);
  });

  it('a token answer without an access token, with the refresh token scrubbed from the error', async () => {
    const { client } = await fixture.setup((_req, res) =>
      json(res, 201, {
        data: { refresh_token: 'leaky-refresh-token', token_type: 'Bearer', expires_in: '1h' },
      }),
    );
    const error = await rejection(client.generateToken());
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expect(JSON.stringify(error)).not.toContain('leaky-refresh-token');
    expect(inspect(error, { depth: 10 })).not.toContain('leaky-refresh-token');
  });
});

describe('secrets never leave in an error or a log line', () => {
  it('an answer that echoes the key secret and the token is scrubbed everywhere', async () => {
    const lines: string[] = [];
    const log = (m: string, d?: unknown) => lines.push(m + JSON.stringify(d ?? {}));
    const { client } = await setup(
      (req, res, body) =>
        json(res, 400, {
          statusCode: 400,
          data: {
            code: 'BAD_REQUEST',
            info: `bad: ${body} auth=${req.headers.authorization} secret=${SECRET}`,
          },
        }),
      { logger: { debug: log, info: log, warn: log, error: log } },
    );
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    const token = tokenPair(1).access_token.split('.')[1] as string;
    for (const text of [
      error.message,
      JSON.stringify(error),
      inspect(error, { depth: 10 }),
      lines.join('\n'),
    ]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(token);
    }
    expect(error.message).toContain('[redacted]');
    expect(lines.length).toBeGreaterThan(0);
  });
});

describe('isOAError', () => {
  it('recognises the SDK errors and nothing else', () => {
    expect(
      isOAError(
        new OABadRequestError('x', {
          status: 400,
          code: undefined,
          info: undefined,
          path: '/',
          timestamp: undefined,
          body: undefined,
        }),
      ),
    ).toBe(true);
    expect(isOAError(new Error('x'))).toBe(false);
    expect(isOAError({ name: 'OAError' })).toBe(false);
  });
});
