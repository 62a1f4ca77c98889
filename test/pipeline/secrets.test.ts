import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  OAApiError,
  OAClient,
  OAConfigError,
  type OAError,
  OAResponseValidationError,
} from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { API, clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json, type RawServer, startRawServer } from '../helpers/raw-server.js';

/** Long, and with a `/`, which JSON may write as `\/`. */
const SECRET = 'secret-with/slash-123456';
const SECRET_ESCAPED = 'secret-with\\/slash-123456';
const ACCESS = `eyJhbGciOiJIUzI1NiJ9.${'eyJzdWIiOiJwcm92aWRlci0xIn0'.repeat(3)}.c2lnbmF0dXJlLXNpZ25hdHVyZQ`;
const REFRESH = 'rt-abcdefghijklmnopqrstuvwxyz-0123456789';

const { setup } = clientFixture({ apiSecret: SECRET });

/** Every text of an error a caller may print, log or send to an error tracker. */
function everyText(error: OAError): string[] {
  const body = (error as { body?: unknown }).body;
  return [
    error.message,
    JSON.stringify(error),
    String(body),
    JSON.stringify(body) ?? '',
    String((error as { info?: unknown }).info),
    error.cause instanceof Error ? error.cause.message : String(error.cause),
    error.stack ?? '',
  ];
}

function expectNone(error: OAError, secrets: string[]) {
  for (const text of everyText(error)) {
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
}

describe('secrets never reach an error', () => {
  it('a 2xx token answer of the wrong shape that echoes the request', async () => {
    const { client } = await setup((_req, res, body) =>
      json(res, 200, { statusCode: 200, data: { echo: JSON.parse(body) } }),
    );
    const error = (await rejectsWithin(client.generateToken(), 5000)) as OAError;
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expectNone(error, [SECRET, SECRET_ESCAPED]);
  });

  it('a 2xx token answer of the wrong shape that echoes the request text', async () => {
    // The secret is not under a key named api_secret here: scrubbing by key name cannot find it.
    const { client } = await setup((_req, res, body) =>
      json(res, 200, { statusCode: 200, data: { received: body } }),
    );
    const error = (await rejectsWithin(client.generateToken(), 5000)) as OAError;
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expectNone(error, [SECRET, SECRET_ESCAPED]);
  });

  it('a truncated token answer holding a new pair', async () => {
    const { client } = await setup((_req, res) => {
      const full = JSON.stringify({
        statusCode: 201,
        data: { access_token: ACCESS, refresh_token: REFRESH, token_type: 'Bearer', expires_in: '1h' },
      });
      // Cut after the refresh token: the text holds both tokens but is not JSON.
      const cut = full.slice(0, full.indexOf(REFRESH) + REFRESH.length + 1);
      res.writeHead(200, { 'content-type': 'application/json' }).end(cut);
    });
    const error = (await rejectsWithin(client.generateToken(), 5000)) as OAError;
    expect(error).toBeInstanceOf(OAResponseValidationError);
    expectNone(error, [ACCESS, REFRESH, SECRET]);
  });

  it('an error answer whose info echoes the secret, JSON-escaped and plain', async () => {
    const { client } = await setup((_req, res) => {
      const text = JSON.stringify({
        statusCode: 400,
        data: { statusCode: 400, code: 'BAD_REQUEST', info: `invalid api_secret SECRET_ESCAPED (${SECRET})` },
        // As a JSON encoder that escapes `/` writes it: the text holds `\/`, the parsed value `/`.
      }).replace('SECRET_ESCAPED', SECRET_ESCAPED);
      res.writeHead(400, { 'content-type': 'application/json' }).end(text);
    });
    const error = (await rejectsWithin(client.generateToken(), 5000)) as OAApiError;
    expect(error).toBeInstanceOf(OAApiError);
    expectNone(error, [SECRET, SECRET_ESCAPED]);
  });
});

describe('a short secret', () => {
  let server: RawServer | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await server?.close();
    server = undefined;
  });

  /** Echoes the api_secret it received in a 401, as a careless server may. */
  const echo401 = () =>
    startRawServer((_req, res, body) => {
      const sent = (JSON.parse(body) as { api_secret?: string }).api_secret;
      json(res, 401, {
        statusCode: 401,
        data: { statusCode: 401, code: 'UNAUTHORIZED', info: `bad ${sent}` },
      });
    });

  it('of under 6 characters is refused at construction, from the options or OA_API_SECRET, and nothing is sent', async () => {
    server = await echo401();
    const short = 'k3y9Z';
    const construct = () => new OAClient({ baseUrl: server?.url, apiKey: 'key-123456', apiSecret: short });
    expect(construct).toThrow(OAConfigError);
    expect(construct).toThrow(/apiSecret \(OA_API_SECRET\) must be at least 6 characters/);
    vi.stubEnv('OA_API_SECRET', short);
    const error = (() => {
      try {
        new OAClient({ baseUrl: server?.url, apiKey: 'key-123456' });
      } catch (e) {
        return e as OAError;
      }
    })();
    expect(error).toBeInstanceOf(OAConfigError);
    expectNone(error as OAError, [short]);
    expect(server.hits).toEqual([]);
  });

  it('of 6 characters, echoed in a 401 and in a 400, reaches no error and no log line', async () => {
    const secret = 'q7/Zx2';
    const lines: string[] = [];
    const log = (message: string, details?: Record<string, unknown>) =>
      lines.push(`${message} ${JSON.stringify(details)}`);
    const logger = { debug: log, info: log, warn: log, error: log };
    let login = 0;
    server = await startRawServer((req, res, body) => {
      if (req.url === `${API}/auth/token` && login++ === 0) {
        const info = `invalid credentials: ${secret} (${JSON.stringify(JSON.parse(body))})`;
        return json(res, 401, { statusCode: 401, data: { statusCode: 401, code: 'UNAUTHORIZED', info } });
      }
      return tokensThen((_r, answer) =>
        json(answer, 400, { statusCode: 400, code: 'BAD_REQUEST', message: `rejected for ${secret}` }),
      )(req, res, body);
    });
    const client = new OAClient({ baseUrl: server.url, apiKey: 'key-123456', apiSecret: secret, logger });
    try {
      const refused = (await rejectsWithin(client.generateToken(), 5000)) as OAError;
      expect(refused).toBeInstanceOf(OAApiError);
      expect((refused as OAApiError).status).toBe(401);
      expectNone(refused, [secret, JSON.stringify(secret).slice(1, -1).replaceAll('/', '\\/')]);
      const bad = (await rejectsWithin(client.sendText({ user_id: 'u-1', msg: 'hi' }), 5000)) as OAError;
      expect(bad).toBeInstanceOf(OAApiError);
      expect((bad as OAApiError).status).toBe(400);
      expectNone(bad, [secret]);
    } finally {
      await client.close();
    }
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).not.toContain(secret);
  });
});
