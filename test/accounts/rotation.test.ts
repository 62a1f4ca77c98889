// Credentials that change, and quotas per account, through createAccounts against the fake OA server
// serving several accounts.
import { afterEach, expect, it } from 'vitest';
import { createAccounts, type OAAccounts, OAUnauthorizedError } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { accountStore, logins, refusedLogins, servedAccounts, texts, tooManyRequests } from './support.js';

const SERVED = servedAccounts(2);

let server: MockServer | undefined;
let accounts: OAAccounts | undefined;
afterEach(async () => {
  await accounts?.close();
  await server?.close();
  accounts = undefined;
  server = undefined;
});

async function start(general?: number) {
  server = await createMockServer({
    accounts: SERVED,
    rateLimit: general === undefined ? false : { general: { max: general, windowMs: 60_000 } },
  });
  return { server, ...accountStore(SERVED) };
}

it('a rotated secret costs one refused login: the resolver is asked again and the new secret used at once', async () => {
  const { server, db, asked, credentials } = await start();
  accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url } });
  const client = accounts.client('shop-1');
  await client.sendText({ user_id: 'u', msg: 'before' });
  server.account('shop-1').rotateSecret('rotated-secret-1');
  db.set('shop-1', { apiKey: 'key-shop-1', apiSecret: 'rotated-secret-1' });
  await Promise.all([1, 2, 3].map((n) => client.sendText({ user_id: 'u', msg: `after ${n}` })));
  expect(refusedLogins(server, 'shop-1')).toBe(1);
  expect(logins(server, 'shop-1')).toBe(2);
  expect(texts(server, 'shop-1')).toHaveLength(4);
  expect(asked).toEqual(['shop-1', 'shop-1']);
});

it('a secret the store learns seconds later: OAUnauthorizedError, no burst of refused logins, then the new one', async () => {
  const { server, db, credentials } = await start();
  accounts = createAccounts({ credentials, clientOptions: { baseUrl: server.url } });
  const client = accounts.client('shop-1');
  await client.sendText({ user_id: 'u', msg: 'before' });
  server.account('shop-1').rotateSecret('rotated-secret-1');
  // A queue of sends meets the refusal: one refused login, the rest refused at once.
  for (let n = 0; n < 20; n++) {
    const error = await rejectsWithin(client.sendText({ user_id: 'u', msg: `queued ${n}` }), 5000);
    expect(error).toBeInstanceOf(OAUnauthorizedError);
  }
  expect(refusedLogins(server, 'shop-1')).toBe(1);
  db.set('shop-1', { apiKey: 'key-shop-1', apiSecret: 'rotated-secret-1' });
  // After the backoff (1 s), the next login asks the store first.
  const started = Date.now();
  let sent = false;
  while (!sent && Date.now() - started < 5000) {
    sent = (await settleWithin(client.sendText({ user_id: 'u', msg: 'later' }), 5000)).ok;
    if (!sent) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  expect(sent).toBe(true);
  expect(refusedLogins(server, 'shop-1')).toBe(1);
  expect(refusedLogins(server, 'shop-2')).toBe(0);
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
  expect(texts(server, 'shop-2')).toHaveLength(2);
  expect(texts(server, 'shop-1')).toHaveLength(2);
  // shop-1's two sends are still waiting for their window; shop-2's never waited.
  expect(stuckSettled).toBe(false);
  expect(waits).toEqual([]);
  expect(tooManyRequests(server)).toBe(0);
  await accounts.close();
  await stuck;
});
