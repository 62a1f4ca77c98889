import { afterEach, expect } from 'vitest';
import { OAClient, type OAClientOptions, OAError } from '../../src/index.js';
import { json, type RawHandler, type RawServer, startRawServer } from './raw-server.js';
import { tokenPair } from './tokens.js';

export const API = '/api/v2/public';

/** Answers the token endpoint with a pair and hands every other request to `answer`. */
export const tokensThen =
  (answer: RawHandler): RawHandler =>
  (req, res, body) => {
    if (req.url === `${API}/auth/token`) return json(res, 201, { data: tokenPair(1) });
    return answer(req, res, body);
  };

/**
 * A raw server and a client pointed at it, both closed after each test of the file that calls this.
 * `current()` gives the server of the running test.
 */
export function clientFixture(defaults: Partial<OAClientOptions> = {}) {
  let server: RawServer | undefined;
  let client: OAClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
    client = undefined;
    server = undefined;
  });
  return {
    async setup(answer: RawHandler, options: Partial<OAClientOptions> = {}) {
      server = await startRawServer(answer);
      client = new OAClient({
        baseUrl: server.url,
        apiKey: 'key-123456',
        apiSecret: 'secret-abcdef',
        ...defaults,
        ...options,
      });
      return { client, server };
    },
    /** Requests received at `${API}${path}` by the current server. */
    hits: (path: string) => server?.hits.filter((h) => h.path === `${API}${path}`).length ?? 0,
    /** Requests received by the current server other than token calls. */
    sends: () => server?.hits.filter((h) => !h.path.includes('/auth/')) ?? [],
  };
}

/** The error a promise rejects with, checked to be one of the SDK's. */
export async function rejection(promise: Promise<unknown>): Promise<OAError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OAError);
  return error as OAError;
}
