/**
 * A real HTTP server on loopback serving several OA accounts behind one base URL, as the service does:
 * a login is routed by its api key, every other request by its token. Each account's logins (refused
 * or not), sends and sockets are recorded; a secret can be rotated, and a window of `limit` requests
 * per account answers 429 beyond it (no test should ever see one).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Listening, listen } from '../helpers/listen.js';
import { tokenPair } from '../helpers/tokens.js';

export interface ServedAccount {
  username: string;
  apiKey: string;
  apiSecret: string;
}

export interface AccountRecord {
  logins: number;
  refusedLogins: number;
  sends: { user_id: string; msg: string; token: string }[];
  tokens: string[];
  tooMany: number;
  /** Requests answered in the current window, for its limit. */
  window: number[];
}

export interface AccountsServer extends Listening {
  accounts: Map<string, AccountRecord>;
  /** Every connection the server accepted. */
  connections(): number;
  /** The connections still open. */
  openConnections(): number;
  /** A new secret for `username`: its tokens and the old secret are refused from now on. */
  rotate(username: string, apiSecret: string): void;
  /** Requests of any account not yet answered are held until `release()`. */
  hold(): void;
  release(): void;
}

const PREFIX = '/api/v2/public/';

export async function startAccountsServer(
  served: ServedAccount[],
  { limit = Number.POSITIVE_INFINITY, windowMs = 60_000 } = {},
): Promise<AccountsServer> {
  const byKey = new Map(served.map((a) => [a.apiKey, { ...a }]));
  const byToken = new Map<string, string>();
  const accounts = new Map<string, AccountRecord>(
    served.map((a) => [
      a.username,
      { logins: 0, refusedLogins: 0, sends: [], tokens: [], tooMany: 0, window: [] },
    ]),
  );
  let issued = 0;
  let held: (() => void)[] | undefined;
  let opened = 0;
  let open = 0;

  const answer = (res: ServerResponse, status: number, data: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status < 300 ? { data } : { statusCode: status, data }));
  };
  const refuse = (res: ServerResponse, status: number, code: string, info: string) =>
    answer(res, status, { statusCode: status, code, info });

  const handle = (req: IncomingMessage, res: ServerResponse, body: Record<string, string>) => {
    const path = (req.url ?? '').slice(PREFIX.length);
    if (path === 'auth/token') {
      const account = byKey.get(body.api_key ?? '');
      if (!account) return refuse(res, 401, 'UNAUTHORIZED', 'Invalid api key or api secret');
      const record = accounts.get(account.username) as AccountRecord;
      if (account.apiSecret !== body.api_secret) {
        record.refusedLogins++;
        return refuse(res, 401, 'UNAUTHORIZED', 'Invalid api key or api secret');
      }
      record.logins++;
      const pair = tokenPair(++issued);
      byToken.set(pair.access_token, account.username);
      record.tokens.push(pair.access_token);
      return answer(res, 200, pair);
    }
    if (path === 'auth/refresh-token')
      return refuse(res, 401, 'UNAUTHORIZED', 'Invalid or expired refresh token');
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    const username = byToken.get(token);
    if (!username) return refuse(res, 401, 'UNAUTHORIZED', 'Invalid token');
    const record = accounts.get(username) as AccountRecord;
    const now = Date.now();
    record.window = record.window.filter((at) => at > now - windowMs);
    if (record.window.length >= limit) {
      record.tooMany++;
      return refuse(res, 429, 'TOO_MANY_REQUESTS', 'Too many requests');
    }
    record.window.push(now);
    if (path === 'webhook/broadcast-message') {
      record.sends.push({ user_id: body.user_id ?? '', msg: body.msg ?? '', token });
      return answer(res, 200, 'success');
    }
    return refuse(res, 404, 'NOT_FOUND', `no ${path} here`);
  };

  const listening = await listen((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const run = () => handle(req, res, JSON.parse(Buffer.concat(chunks).toString() || '{}'));
      if (held) held.push(run);
      else run();
    });
  });
  listening.server.on('connection', (socket) => {
    opened++;
    open++;
    socket.on('close', () => open--);
  });
  return {
    ...listening,
    accounts,
    connections: () => opened,
    openConnections: () => open,
    rotate(username, apiSecret) {
      for (const account of byKey.values()) if (account.username === username) account.apiSecret = apiSecret;
      for (const [token, owner] of byToken) if (owner === username) byToken.delete(token);
    },
    hold() {
      held ??= [];
    },
    release() {
      const waiting = held ?? [];
      held = undefined;
      for (const run of waiting) run();
    },
  };
}
