// Credentials that change, and quotas per account, through createAccounts against a loopback server
// of several accounts.
import { afterEach, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, type OACredentials, OAUnauthorizedError } from '../../src/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { type AccountsServer, startAccountsServer } from './accounts-server.js';

const SERVED = [
  { username: 'shop-1', apiKey: 'key-1', apiSecret: 'secret-1-abcdef' },
  { username: 'shop-2', apiKey: 'key-2', apiSecret: 'secret-2-abcdef' },
];

let server: AccountsServer | undefined;
let accounts: OAAccounts | undefined;
afterEach(async () => {
  await accounts?.close();
  await server?.close();
  accounts = undefined;
  server = undefined;
});

async function start(limit = Number.POSITIVE_INFINITY) {
  server = await startAccountsServer(SERVED, { limit });
  const db = new Map<string, OACredentials>(
    SERVED.map((a) => [a.username, { apiKey: a.apiKey, apiSecret: a.apiSecret }]),
  );
  const asked: string[] = [];
  return {
    server,
    db,
    asked,
    credentials: (account: string) => {
      asked.push(account);
      return db.get(account);
    },
  };
}

it('a rotated secret costs one refused login: the resolver is asked again and the new secret used at once', async () => {
  const { server, db, asked, credentials } = await start();
  accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url } });
  const client = accounts.client('shop-1');
  await client.sendText({ user_id: 'u', msg: 'before' });
  server.rotate('shop-1', 'rotated-secret-1');
  db.set('shop-1', { apiKey: 'key-1', apiSecret: 'rotated-secret-1' });
  await Promise.all([1, 2, 3].map((n) => client.sendText({ user_id: 'u', msg: `after ${n}` })));
  const record = server.accounts.get('shop-1');
  expect(record?.refusedLogins).toBe(1);
  expect(record?.logins).toBe(2);
  expect(record?.sends).toHaveLength(4);
  expect(asked).toEqual(['shop-1', 'shop-1']);
});

it('a secret the store learns seconds later: OAUnauthorizedError, no burst of refused logins, then the new one', async () => {
  const { server, db, credentials } = await start();
  accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url } });
  const client = accounts.client('shop-1');
  await client.sendText({ user_id: 'u', msg: 'before' });
  server.rotate('shop-1', 'rotated-secret-1');
  // A queue of sends meets the refusal: one refused login, the rest refused at once.
  for (let n = 0; n < 20; n++) {
    const error = await rejectsWithin(client.sendText({ user_id: 'u', msg: `queued ${n}` }), 5000);
    expect(error).toBeInstanceOf(OAUnauthorizedError);
  }
  expect(server.accounts.get('shop-1')?.refusedLogins).toBe(1);
  db.set('shop-1', { apiKey: 'key-1', apiSecret: 'rotated-secret-1' });
  // After the backoff (1 s), the next login asks the store first.
  const started = Date.now();
  let sent = false;
  while (!sent && Date.now() - started < 5000) {
    sent = (await settleWithin(client.sendText({ user_id: 'u', msg: 'later' }), 5000)).ok;
    if (!sent) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(sent).toBe(true);
  expect(server.accounts.get('shop-1')?.refusedLogins).toBe(1);
  expect(server.accounts.get('shop-2')?.refusedLogins).toBe(0);
});

it("a saturated account never delays another's sends (and no 429 anywhere)", async () => {
  const { server, credentials } = await start(3);
  accounts = createAccounts({
    credentials,
    clientOptions: {
      baseUrl: server.url,
      rateLimit: { general: { max: 3, windowMs: 60_000 }, upload: { max: 1, windowMs: 60_000 } },
    },
  });
  const busy = accounts.client('shop-1');
  // The login and two sends fill shop-1's window; the next two wait for it to move on.
  await busy.sendText({ user_id: 'u', msg: 'one' });
  await busy.sendText({ user_id: 'u', msg: 'two' });
  const waits: string[] = [];
  busy.on('rateLimitWait', () => waits.push('shop-1'));
  let stuckSettled = false;
  const stuck = Promise.allSettled(
    [3, 4].map((n) => busy.sendText({ user_id: 'u', msg: `${n}` }, { timeoutMs: 60_000 })),
  ).then(() => {
    stuckSettled = true;
  });
  const other = accounts.client('shop-2');
  other.on('rateLimitWait', () => waits.push('shop-2'));
  const outcome = await settleWithin(
    Promise.all([other.sendText({ user_id: 'u', msg: 'a' }), other.sendText({ user_id: 'u', msg: 'b' })]),
    5000,
    "shop-2's sends while shop-1 waits",
  );
  expect(outcome.ok).toBe(true);
  expect(server.accounts.get('shop-2')?.sends).toHaveLength(2);
  expect(server.accounts.get('shop-1')?.sends).toHaveLength(2);
  // shop-1's two sends are still waiting for their window; shop-2's never waited.
  expect(stuckSettled).toBe(false);
  expect(waits).toEqual([]);
  for (const record of server.accounts.values()) expect(record.tooMany).toBe(0);
  await accounts.close();
  await stuck;
});
