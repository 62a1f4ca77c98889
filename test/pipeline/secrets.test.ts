import { describe, expect, it } from 'vitest';
import { OAApiError, type OAError, OAResponseValidationError } from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { clientFixture } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

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
