// The seams between accounts, their credentials store and what is kept for each OA, under faults:
// what is kept belongs to the OA that earned it (base URL + api key), not to the account id; a store
// that hangs or throws is bounded and asked again; a client dropped beyond maxClients and still held
// keeps working; refused logins name their account. Against the fake OA server (one base URL, one
// account per OA) and, for what is shared across processes, a real redis-server.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import {
  createAccounts,
  OAClient,
  type OACredentials,
  OACredentialsError,
  OAUnauthorizedError,
} from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';
import {
  buildInboundEvent,
  createMockServer,
  type FakeAccountOptions,
  type MockServer,
} from '../../src/testing/index.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { logins, servedAccounts, texts, tooManyRequests } from './support.js';

const IMAGE = readFileSync(new URL('../fixtures/media/sample.png', import.meta.url));

let server: MockServer | undefined;
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const one of opened.splice(0).reverse()) await one.close();
  await server?.close();
  server = undefined;
});

function keep<T extends { close(): Promise<void> }>(one: T): T {
  opened.push(one);
  return one;
}

const uploads = (mock: MockServer, username: string) =>
  mock.account(username).requests.filter((r) => r.path.endsWith('/upload/image')).length;

/** Two OAs behind one base URL: the one a customer connected first, and the one they reconnected. */
const [OLD, NEW] = servedAccounts(2, 'oa') as [FakeAccountOptions, FakeAccountOptions];
const credentialsOf = (oa: FakeAccountOptions): OACredentials => ({
  apiKey: oa.apiKey,
  apiSecret: oa.apiSecret,
});

describe('what is kept belongs to the OA that earned it', () => {
  const shared = REDIS_SERVER ? useRedisServer() : undefined;

  it.skipIf(!REDIS_SERVER)(
    'a reconnected OA starts clean after a restart: its own login, its own upload, nothing of the old OA',
    async () => {
      server = await createMockServer({ accounts: [OLD, NEW], rateLimit: false });
      const url = server.url;
      const start = (oa: FakeAccountOptions) => {
        const coordination = keep(createRedisCoordination({ url: shared?.server.url ?? '' }));
        return keep(
          createAccounts({
            credentials: () => credentialsOf(oa),
            clientOptions: { baseUrl: url, coordination },
          }),
        );
      };
      // Before: shop-1 is connected to the old OA.
      const before = start(OLD);
      await before.client('shop-1').sendText({ user_id: 'u', msg: 'to the old OA' });
      const { url: oldUrl } = await before.client('shop-1').uploadImage(IMAGE, { filename: 'a.png' });
      await before.close();
      // After a restart, the store answers the new OA for the same account id.
      const after = start(NEW);
      await after.client('shop-1').sendText({ user_id: 'u', msg: 'to the new OA' });
      const { url: newUrl } = await after.client('shop-1').uploadImage(IMAGE, { filename: 'a.png' });
      expect(texts(server, OLD.username)).toEqual(['to the old OA']);
      expect(texts(server, NEW.username)).toEqual(['to the new OA']);
      expect(logins(server, NEW.username)).toBe(1);
      expect(uploads(server, NEW.username)).toBe(1);
      expect(newUrl).not.toBe(oldUrl);
    },
  );

  it.skipIf(!REDIS_SERVER)(
    'one api key through createAccounts and through a plain OAClient shares one login and one quota',
    async () => {
      const quota = { max: 10, windowMs: 3000 };
      server = await createMockServer({ accounts: [OLD], rateLimit: { general: quota } });
      const coordination = keep(createRedisCoordination({ url: shared?.server.url ?? '' }));
      const rateLimit = { general: quota };
      const accounts = keep(
        createAccounts({
          credentials: () => credentialsOf(OLD),
          clientOptions: { baseUrl: server.url, coordination, rateLimit },
        }),
      );
      const plain = keep(
        new OAClient({ baseUrl: server.url, ...credentialsOf(OLD), coordination, rateLimit }),
      );
      const sends = Array.from({ length: 8 }, (_, n) => [
        accounts.client('shop-1').sendText({ user_id: 'u', msg: `account ${n}` }),
        plain.sendText({ user_id: 'u', msg: `plain ${n}` }),
      ]).flat();
      expect((await settleWithin(Promise.all(sends), 20_000, 'the 16 sends')).ok).toBe(true);
      expect(texts(server, OLD.username)).toHaveLength(16);
      expect(logins(server, OLD.username)).toBe(1);
      expect(tooManyRequests(server)).toBe(0);
    },
  );

  it('an account whose credentials now name another OA, read after a refused login, sends there', async () => {
    server = await createMockServer({ accounts: [OLD, NEW], rateLimit: false });
    let current = OLD;
    const accounts = keep(
      createAccounts({ credentials: () => credentialsOf(current), clientOptions: { baseUrl: server.url } }),
    );
    const client = accounts.client('shop-1');
    await client.sendText({ user_id: 'u', msg: 'old' });
    // The customer disconnects the old OA (its secret no longer works) and connects the new one.
    server.account(OLD.username).rotateSecret('revoked-secret-123');
    server.account(OLD.username).expireAccessTokens();
    current = NEW;
    // The old OA's token is refused, its refresh too (a new fake session would), its login too: the
    // store, asked again, names the new OA, and the send goes there with the new OA's own token.
    const outcome = await settleWithin(client.sendText({ user_id: 'u', msg: 'new' }), 10_000, 'the send');
    expect(outcome.ok, String(outcome.ok ? '' : outcome.error)).toBe(true);
    expect(logins(server, NEW.username)).toBe(1);
    expect(texts(server, NEW.username)).toEqual(['new']);
    expect(texts(server, OLD.username)).toEqual(['old']);
  });
});

describe('two account ids of one OA', () => {
  it("share one token, and each renews it with its own client: one's close() leaves the other working", async () => {
    server = await createMockServer({ accounts: [OLD], rateLimit: false });
    const accounts = keep(
      createAccounts({ credentials: () => credentialsOf(OLD), clientOptions: { baseUrl: server.url } }),
    );
    const [a, b] = [accounts.client('shop-a'), accounts.client('shop-b')];
    await a.sendText({ user_id: 'u', msg: 'a1' });
    await b.sendText({ user_id: 'u', msg: 'b1' });
    expect(logins(server, OLD.username)).toBe(1);
    await b.close();
    // A's next call needs a renewal: it runs through A, not through the closed client that used the
    // OA's state last.
    server.account(OLD.username).expireAccessTokens();
    await a.sendText({ user_id: 'u', msg: 'a2' });
    expect(texts(server, OLD.username)).toEqual(['a1', 'b1', 'a2']);
  });
});

describe('a credentials store that hangs or throws', () => {
  it('a lookup that never settles is bounded, even for a call without a deadline, and asked again', async () => {
    server = await createMockServer({ accounts: [OLD], rateLimit: false });
    let hang = true;
    let asked = 0;
    const accounts = keep(
      createAccounts({
        credentials: () => {
          asked++;
          return hang ? new Promise<never>(() => {}) : credentialsOf(OLD);
        },
        credentialsTimeoutMs: 300,
        clientOptions: { baseUrl: server.url },
      }),
    );
    const client = accounts.client('shop-1');
    const first = await rejectsWithin(client.sendText({ user_id: 'u', msg: 'first' }), 3000);
    expect(first).toBeInstanceOf(OACredentialsError);
    expect((first as OACredentialsError).deliveryUnknown).toBe(false);
    expect((first as Error).message).toContain('shop-1');
    expect((first as Error).message).toContain('300 ms');
    hang = false;
    await client.sendText({ user_id: 'u', msg: 'second' });
    expect(asked).toBe(2);
    expect(texts(server, OLD.username)).toEqual(['second']);
  });

  it("a store that throws: OACredentialsError, not sent, the store's error as cause; the next call asks again", async () => {
    server = await createMockServer({ accounts: [OLD], rateLimit: false });
    let down = true;
    const accounts = keep(
      createAccounts({
        credentials: () => {
          if (down) throw new Error('ECONNREFUSED accounts-db');
          return credentialsOf(OLD);
        },
        clientOptions: { baseUrl: server.url },
      }),
    );
    const error = await rejectsWithin(accounts.client('shop-1').sendText({ user_id: 'u', msg: 'x' }), 3000);
    expect(error).toBeInstanceOf(OACredentialsError);
    expect((error as OACredentialsError).account).toBe('shop-1');
    expect(((error as Error).cause as Error).message).toBe('ECONNREFUSED accounts-db');
    down = false;
    await accounts.client('shop-1').sendText({ user_id: 'u', msg: 'y' });
    expect(texts(server, OLD.username)).toEqual(['y']);
  });
});

describe('clients dropped beyond maxClients', () => {
  it('a bot with maxClients far below its active accounts answers every message', async () => {
    const served = servedAccounts(12);
    server = await createMockServer({ accounts: served, rateLimit: false });
    const accounts = keep(
      createAccounts({
        credentials: (id) => served.find((a) => a.username === id),
        clientOptions: { baseUrl: server.url },
        maxClients: 2,
      }),
    );
    const bot = createBot({ accounts });
    bot.on('text', async (ctx) => {
      // Other accounts' messages come in while this handler waits: its client is dropped meanwhile.
      await new Promise((resolve) => setTimeout(resolve, 200));
      await ctx.reply(`echo ${ctx.text}`);
    });
    const events = served.map((a, n) =>
      parseWebhookEvent(
        buildInboundEvent({ type: 'text', text: `m${n}` }, { username: a.username, from: 'u-1' }) as object,
      ),
    );
    const outcome = await settleWithin(
      Promise.all(events.map((event) => bot.handle(event))),
      15_000,
      'the 12 messages',
    );
    expect(outcome.ok, String(outcome.ok ? '' : outcome.error)).toBe(true);
    served.forEach((a, n) => {
      expect(texts(server as MockServer, a.username)).toEqual([`echo m${n}`]);
    });
  });
});

describe('messages', () => {
  it('the first refused login of an account names the account, as the later ones do', async () => {
    server = await createMockServer({ accounts: [OLD], rateLimit: false });
    const accounts = keep(
      createAccounts({
        credentials: () => ({ apiKey: OLD.apiKey, apiSecret: 'wrong-secret-123' }),
        clientOptions: { baseUrl: server.url },
      }),
    );
    const first = await rejectsWithin(accounts.client('shop-1').sendText({ user_id: 'u', msg: 'x' }), 5000);
    expect(first).toBeInstanceOf(OAUnauthorizedError);
    expect((first as Error).message).toContain('OA account shop-1');
    const later = await rejectsWithin(accounts.client('shop-1').sendText({ user_id: 'u', msg: 'x' }), 5000);
    expect((later as Error).message).toContain('OA account shop-1');
  });
});
