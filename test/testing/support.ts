/** Shared pieces of the fake-server tests: raw calls over real HTTP, multipart bodies, a manual clock. */
import { request } from 'undici';
import { afterEach } from 'vitest';
import { OAClient, type OAClientOptions } from '../../src/index.js';
import {
  createMockServer,
  type FakeOA,
  type MockServer,
  type MockServerOptions,
} from '../../src/testing/index.js';

export const API = '/api/v2/public';

/**
 * `start(options)` creates a fake server (and `connect()` an SDK client to it); both are closed after
 * each test of the file that calls this.
 */
export function mockServerFixture() {
  let mock: MockServer | undefined;
  const clients: OAClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    await mock?.close();
    mock = undefined;
  });
  return {
    async start(options: MockServerOptions = {}): Promise<MockServer> {
      mock = await createMockServer(options);
      return mock;
    },
    /** A client of `server`, closed after the test. */
    connect(server: MockServer, options: Partial<OAClientOptions> = {}): OAClient {
      const client = new OAClient({
        baseUrl: server.url,
        apiKey: server.apiKey,
        apiSecret: server.apiSecret,
        ...options,
      });
      clients.push(client);
      return client;
    },
  };
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** POSTs JSON (or a prepared body) to `${base}${path}`; `token` adds the bearer header. */
export async function post(
  base: string,
  path: string,
  body: unknown,
  options: { token?: string; headers?: Record<string, string>; raw?: Uint8Array | string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const res = await request(`${base}${path.startsWith('/api') ? path : `${API}${path}`}`, {
    method: 'POST',
    headers,
    body: options.raw ?? JSON.stringify(body),
  });
  const text = await res.body.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: res.statusCode, headers: res.headers, body: parsed };
}

/** A multipart body with one file part (and its Content-Type header with the boundary). */
export async function multipart(
  field: string,
  bytes: Uint8Array,
  type: string,
  filename: string,
): Promise<{ raw: Uint8Array; headers: Record<string, string> }> {
  const form = new FormData();
  form.append(field, new Blob([new Uint8Array(bytes)], { type }), filename);
  const req = new Request('http://x/', { method: 'POST', body: form });
  return {
    raw: new Uint8Array(await req.arrayBuffer()),
    headers: { 'content-type': req.headers.get('content-type') ?? '' },
  };
}

/** Uploads one file with a token of `fake`. */
export async function upload(
  base: string,
  fake: FakeOA,
  kind: 'image' | 'video' | 'audio',
  file: { field?: string; bytes: Uint8Array; type: string; filename: string },
): Promise<Reply> {
  const field = file.field ?? { image: 'file', video: 'video', audio: 'audio' }[kind];
  const { raw, headers } = await multipart(field, file.bytes, file.type, file.filename);
  return post(base, `/upload/${kind}`, undefined, {
    raw,
    headers,
    token: fake.issueTokenPair().access_token,
  });
}

/** A clock the test moves by hand: `now` for the fake, `advance(ms)` to move it. */
export function manualClock(start = Date.UTC(2025, 0, 1)) {
  let time = start;
  return {
    now: () => time,
    advance(ms: number) {
      time += ms;
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The 8 bytes of a PNG signature plus some data: enough for the fake, which trusts the part's type. */
export const PNG_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5]);

export const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
