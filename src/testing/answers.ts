/** The answer layouts of the spec: `{data}` on success, the error envelope, the top-level error, the 429. */

import type { GreetingRecord } from './types.js';

/** An answer of the core before it is encoded. */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** Where every operation of the API lives. */
export const API = '/api/v2/public';

const JSON_TYPE = 'application/json; charset=utf-8';

const pad = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:mm:ss`, the spec's format for `timestamp`, `broadcast_at` and `created_at` (UTC here). */
export function formatTimestamp(ms: number): string {
  const d = new Date(ms);
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  );
}

/** A JSON answer. */
export function jsonAnswer(status: number, body: unknown, headers: Record<string, string> = {}): Answer {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, ...headers },
    body: Buffer.from(JSON.stringify(body)),
  };
}

/** The default error code of a status, as in the spec's table where it has one. */
export function codeForStatus(status: number): string {
  const codes: Record<number, string> = {
    400: 'BAD_REQUEST',
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    413: 'PAYLOAD_TOO_LARGE',
    429: 'TOO_MANY_REQUESTS',
    500: 'INTERNAL_SERVER_ERROR',
    502: 'BAD_GATEWAY',
    503: 'SERVICE_UNAVAILABLE',
    504: 'GATEWAY_TIMEOUT',
  };
  return codes[status] ?? (status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST');
}

/** The spec's error envelope: `{ statusCode, data: { statusCode, code, info }, timestamp, path }`. */
export function errorAnswer(
  status: number,
  code: string,
  info: string,
  path: string,
  now: number,
  headers: Record<string, string> = {},
): Answer {
  return jsonAnswer(
    status,
    { statusCode: status, data: { statusCode: status, code, info }, timestamp: formatTimestamp(now), path },
    headers,
  );
}

/** The other layout the spec shows (unsupported audio type): `{ statusCode, code, info }` at the top. */
export function topLevelErrorAnswer(status: number, code: string, info: string): Answer {
  return jsonAnswer(status, { statusCode: status, code, info });
}

/** The text in `data` of a 429 (NestJS throttler's). */
const TOO_MANY_REQUESTS_TEXT = 'ThrottlerException: Too Many Requests';

/** A 429: `data` is a plain string (spec "Errors"). */
export function tooManyRequestsAnswer(path: string, now: number, retryAfterSeconds?: number): Answer {
  const headers: Record<string, string> =
    retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) };
  return jsonAnswer(
    429,
    { statusCode: 429, data: TOO_MANY_REQUESTS_TEXT, timestamp: formatTimestamp(now), path },
    headers,
  );
}

/** A success envelope `{ data }`. */
export function dataAnswer(status: number, data: unknown): Answer {
  return jsonAnswer(status, { data });
}

/** The `code` and `info` of an error answer, in either layout; nothing for a success or an HTML page. */
export function answerError(answer: Answer): { code?: string; info?: string } {
  if (answer.status < 400) return {};
  if (answer.status === 429) return { code: 'TOO_MANY_REQUESTS' };
  try {
    const body = JSON.parse(Buffer.from(answer.body).toString('utf8')) as {
      code?: unknown;
      info?: unknown;
      data?: { code?: unknown; info?: unknown };
    };
    const code = body.data?.code ?? body.code;
    const info = body.data?.info ?? body.info;
    return {
      ...(typeof code === 'string' ? { code } : {}),
      ...(typeof info === 'string' ? { info } : {}),
    };
  } catch {
    return {}; // an HTML error page has no code
  }
}

/** The greeting endpoint 3 sends unless `greeting` says otherwise. */
export const DEFAULT_GREETING: Readonly<GreetingRecord> = Object.freeze({
  id: '5f1d7c52-8a7b-4c1e-9f3a-2b6d0e4c8a11',
  title: 'Welcome',
  slug: 'welcome',
  data: [{ type: 'message', msg: 'Welcome to our Official Account!' }],
});
