import type { IncomingMessage, ServerResponse } from 'node:http';
import { API } from './client-fixture.js';
import { listen } from './listen.js';
import { tokenPair } from './tokens.js';

/** What the server does with every request to the path under test. */
export type FaultName =
  | 'reset before read'
  | 'reset after read'
  | '502 HTML'
  | '503 Retry-After: 1'
  | 'hang'
  | 'trickle'
  | 'invalid JSON'
  | 'wrong data shape'
  | '429 no Retry-After'
  | '429 Retry-After: 0'
  | '429 Retry-After: past date'
  | '429 Retry-After: -1'
  | '429 retry-after-ms: 0'
  | '429 Retry-After: 2'
  | 'JOB_BUSY'
  | '401';

/** One request the server received. */
export interface FaultHit {
  path: string;
  /** The server read the whole body. */
  read: boolean;
  /** The server acted on it (a send or broadcast went out), whatever the client then heard. */
  delivered: boolean;
}

/** A running fault server and its request log. */
export interface FaultServer {
  url: string;
  hits: FaultHit[];
  /** Requests received at `path`. */
  count(path: string): number;
  /** Requests to `path` the server acted on. */
  deliveries(path: string): number;
  close(): Promise<void>;
}

const errorBody = (status: number, code: string, info: string, path: string) => ({
  statusCode: status,
  data: { statusCode: status, code, info },
  timestamp: '2026-11-22 10:00:00',
  path,
});

const HTML_502 =
  '<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>';

let pairs = 0;

/** The successful `data` of each endpoint the fault matrix calls. */
function success(path: string): unknown {
  if (path.startsWith(`${API}/auth/`)) return tokenPair(++pairs);
  if (path === `${API}/webhook/broadcast-message`) return 'success';
  if (path === `${API}/message/broadcast-message`) {
    return {
      id: 'b-1',
      data: [{ type: 'message', msg: 'hi' }],
      broadcast_at: '2026-11-22T10:00:00.000Z',
      created_at: '2026-11-22T10:00:00.000Z',
      estimate_time_detail: { total_job_time_minutes: 0 },
    };
  }
  if (path === `${API}/upload/image`) return { src_file: 'a.png', url: 'https://cdn.example.com/a.png' };
  return 'success';
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/html' : 'application/json';
  res.writeHead(status, { 'content-type': type, ...headers }).end(text);
}

/** A 429 with the headers `headers()` makes; the API did not act on the request. */
const tooMany =
  (headers: () => Record<string, string>) =>
  (res: ServerResponse): boolean => {
    send(res, 429, { statusCode: 429, data: 'ThrottlerException: Too Many Requests' }, headers());
    return false;
  };

/**
 * How each fault answers, after the server read the body (`reset before read` never gets here). The
 * return value says whether the server acted on the request: for an answer of 5xx, a bad 2xx body, a
 * hang or a trickle it did, and the client cannot know.
 */
const ANSWERS: Record<
  Exclude<FaultName, 'reset before read'>,
  (res: ServerResponse, path: string) => boolean
> = {
  'reset after read': (res) => {
    res.socket?.resetAndDestroy();
    return true;
  },
  '502 HTML': (res) => {
    send(res, 502, HTML_502);
    return true;
  },
  '503 Retry-After: 1': (res) => {
    send(res, 503, HTML_502.replaceAll('502 Bad Gateway', '503 Service Unavailable'), { 'retry-after': '1' });
    return true;
  },
  hang: () => true,
  trickle: (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    // A byte every 200 ms, never the end: only the client's deadline stops it.
    const timer = setInterval(() => res.write(' '), 200);
    res.on('close', () => clearInterval(timer));
    return true;
  },
  'invalid JSON': (res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"statusCode":201,"data":');
    return true;
  },
  'wrong data shape': (res) => {
    send(res, 200, { statusCode: 200, data: { unexpected: true } });
    return true;
  },
  '429 no Retry-After': tooMany(() => ({})),
  '429 Retry-After: 0': tooMany(() => ({ 'retry-after': '0' })),
  '429 Retry-After: past date': tooMany(() => ({
    'retry-after': new Date(Date.now() - 60_000).toUTCString(),
  })),
  '429 Retry-After: -1': tooMany(() => ({ 'retry-after': '-1' })),
  '429 retry-after-ms: 0': tooMany(() => ({ 'retry-after-ms': '0' })),
  '429 Retry-After: 2': tooMany(() => ({ 'retry-after': '2' })),
  JOB_BUSY: (res, path) => {
    send(res, 400, errorBody(400, 'JOB_BUSY', 'A broadcast job is running', path));
    return false;
  },
  '401': (res, path) => {
    send(res, 401, errorBody(401, 'UNAUTHORIZED', 'Unauthorized', path));
    return false;
  },
};

async function readAll(req: IncomingMessage): Promise<void> {
  for await (const _ of req) {
    // Only the end of the body matters here.
  }
}

/**
 * A server on loopback that answers every request to `target` with `fault` and every other request
 * (the token endpoints while they are not under test) normally, and logs what it read and acted on.
 */
export async function startFaultServer(target: string, fault: FaultName): Promise<FaultServer> {
  const hits: FaultHit[] = [];
  const { url, close } = await listen(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const hit: FaultHit = { path, read: false, delivered: false };
    hits.push(hit);
    if (path === target && fault === 'reset before read') {
      req.socket.resetAndDestroy();
      return;
    }
    await readAll(req);
    hit.read = true;
    if (path !== target || fault === 'reset before read') {
      return send(res, 201, { statusCode: 201, data: success(path) });
    }
    hit.delivered = ANSWERS[fault](res, path);
  });
  return {
    url,
    hits,
    count: (path) => hits.filter((h) => h.path === path).length,
    deliveries: (path) => hits.filter((h) => h.path === path && h.delivered).length,
    close,
  };
}
