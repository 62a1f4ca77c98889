// What the accounts tests read of the fake OA server (one server, several accounts): each account's
// logins, refused logins and sends, and the platform's store of connected accounts they resolve from.
import type { OACredentials } from '../../src/index.js';
import type { FakeAccountOptions, MockServer } from '../../src/testing/index.js';

/** `n` accounts of the fake: `shop-1` ... with their own key and secret. */
export function servedAccounts(n: number, prefix = 'shop'): FakeAccountOptions[] {
  return Array.from({ length: n }, (_, i) => ({
    username: `${prefix}-${i + 1}`,
    apiKey: `key-${prefix}-${i + 1}`,
    apiSecret: `secret-${prefix}-${i + 1}-abcdef`,
  }));
}

const isLogin = (path: string) => path.endsWith('/auth/token');

/** The logins endpoint 1 accepted for `username`. */
export function logins(mock: MockServer, username: string): number {
  return mock
    .account(username)
    .requests.filter((r) => isLogin(r.path) && r.status !== undefined && r.status < 300).length;
}

/** The logins endpoint 1 refused (401) for `username`. */
export function refusedLogins(mock: MockServer, username: string): number {
  return mock.account(username).requests.filter((r) => isLogin(r.path) && r.status === 401).length;
}

/** The texts delivered by `username`'s account, in order. */
export function texts(mock: MockServer, username: string): string[] {
  return mock.account(username).deliveries.map((d) => String(d.items[0]?.msg));
}

/** The 429s any account answered. */
export function tooManyRequests(mock: MockServer): number {
  return mock.accounts.flatMap((a) => a.requests).filter((r) => r.status === 429).length;
}

/** The account (`sub`) a bearer token names: the fake checks it was signed by that account. */
export function tokenAccount(authorization: string | undefined): string | undefined {
  const payload = (authorization ?? '').replace(/^Bearer /, '').split('.')[1] ?? '';
  return (JSON.parse(Buffer.from(payload, 'base64url').toString() || '{}') as { sub?: string }).sub;
}

/** The platform's store of connected accounts, and which accounts it was asked for. */
export function accountStore(entries: readonly FakeAccountOptions[], delayMs = 0) {
  const db = new Map<string, OACredentials>(
    entries.map((a) => [a.username, { apiKey: a.apiKey, apiSecret: a.apiSecret }]),
  );
  const asked: string[] = [];
  const credentials = async (account: string) => {
    asked.push(account);
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return db.get(account);
  };
  return { db, asked, credentials };
}
