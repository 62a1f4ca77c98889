// One outbox for 20 accounts under crashes: 3 worker processes (one SIGKILLed mid-campaign, then
// another, each started again), a redis-server with appendonly, one account with a campaign of 5,000
// sends and 19 with a few sends, and a reply per account added while the campaign runs. The runs that
// repeat the suite (OA_TEST_REPEAT=1: other Node versions, the Redis Cluster) scale the campaign down
// to 400 sends at a fifth of the quota, so that each takes about 15 s instead of about a minute.
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { servedAccounts, tooManyRequests } from '../accounts/support.js';
import { REDIS_SERVER, type RedisServer, startRedis } from '../redis/redis-server.js';
import type { AccountsWorkerConfig } from './outbox-accounts-worker.js';
import { kill, type Running, startScript } from './processes.js';

const SCRIPT = fileURLToPath(new URL('./outbox-accounts-worker.ts', import.meta.url));
const SERVED = servedAccounts(20);
const FULL = process.env.OA_TEST_REPEAT !== '1';
const CAMPAIGN = FULL ? 5000 : 400;
const QUOTA = { max: FULL ? 200 : 40, windowMs: 1000 };
/** The campaign's deliveries at which a worker is killed (and started again): at 20% and at 50%. */
const FIRST_KILL = CAMPAIGN / 5;
const SECOND_KILL = CAMPAIGN / 2;
const CONCURRENCY = 8;
const LOCK_MS = 3000;
/** A send of an account with its quota free starts within this of being added (issue: a slot + 2 s). */
const BOUND_MS = 2000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!REDIS_SERVER)('outbox with accounts, chaos', () => {
  let redis: RedisServer | undefined;
  let mock: MockServer | undefined;
  let outbox: Outbox | undefined;
  const workers = new Set<Running>();

  afterAll(async () => {
    await Promise.all([...workers].map(kill));
    await outbox?.close();
    await mock?.close();
    await redis?.stop();
  });

  it(`${CAMPAIGN} campaign sends and 19 small accounts, workers killed: none twice, none lost, no 429, the small ones and the replies on time`, async () => {
    redis = await startRedis({ appendonly: true });
    mock = await createMockServer({ accounts: SERVED, rateLimit: { general: QUOTA, mode: 'sliding' } });
    outbox = createOutbox({ connection: { url: redis.url }, name: 'chaos' });
    const config: AccountsWorkerConfig = {
      redisUrl: redis.url,
      baseUrl: mock.url,
      accounts: SERVED,
      name: 'chaos',
      concurrency: CONCURRENCY,
      lockDurationMs: LOCK_MS,
      general: QUOTA,
    };
    const start = async () => {
      const running = await startScript(SCRIPT, [JSON.stringify(config)]);
      workers.add(running);
      return running;
    };
    const started = await Promise.all([start(), start(), start()]);

    const send = (account: string, key: string, bulk = false): OutboxEntry => ({
      method: 'sendText',
      params: { user_id: 'u', msg: `${account} ${key}` },
      key,
      account,
      ...(bulk ? { bulk } : {}),
    });
    const small = SERVED.slice(1).map((a) => a.username);
    await outbox.addMany(Array.from({ length: CAMPAIGN }, (_, i) => send('shop-1', `c${i}`, true)));
    const addedAt = new Map<string, number>();
    const addTimed = async (entries: OutboxEntry[]) => {
      const now = Date.now();
      for (const e of entries) addedAt.set(`${e.account} ${e.key}`, now);
      await outbox?.addMany(entries);
    };
    // With the workers just started (each account's first send logs it in): checked below against
    // the campaign's progress.
    await outbox.addMany(small.flatMap((account) => [send(account, 's1'), send(account, 's2')]));

    const delivered = () => mock?.account('shop-1').deliveries.length ?? 0;
    const waitUntil = async (done: () => boolean, ms: number) => {
      const deadline = Date.now() + ms;
      while (!done() && Date.now() < deadline) await sleep(25);
    };
    // Mid-campaign: a worker killed, and started again.
    await waitUntil(() => delivered() >= FIRST_KILL, 30_000);
    const [first, second] = started as [Running, Running, Running];
    await kill(first);
    workers.delete(first);
    void start();
    // The replies, while the campaign runs; then another worker killed.
    await addTimed([...SERVED.map((a) => send(a.username, 'reply')), ...small.map((a) => send(a, 's3'))]);
    await waitUntil(() => delivered() >= SECOND_KILL, 30_000);
    await kill(second);
    workers.delete(second);
    void start();

    await Promise.all(
      SERVED.map(({ username }) => outbox?.waitFor('all', { account: username, timeoutMs: 90_000 })),
    );
    // Nothing lost: every key ended, delivered, or unknown for a send in flight at a kill.
    const counts = await Promise.all(SERVED.map(({ username }) => outbox?.counts({ account: username })));
    const sum = (state: 'delivered' | 'unknown') => counts.reduce((n, c) => n + (c?.[state] ?? 0), 0);
    const total = CAMPAIGN + small.length * 3 + SERVED.length;
    console.log(
      `${total} keys: ${sum('unknown')} unknown (in flight at a kill), ${sum('delivered')} delivered`,
    );
    expect(sum('delivered') + sum('unknown')).toBe(total);
    expect(sum('unknown')).toBeLessThanOrEqual(2 * CONCURRENCY);
    // None twice: each text (account and key) arrived at most once, each delivered key once.
    const texts = SERVED.flatMap(({ username }) =>
      mock?.account(username).deliveries.map((d) => String(d.items[0]?.msg)),
    );
    expect(new Set(texts).size).toBe(texts.length);
    // Every delivered key arrived; an unknown one (in flight at a kill) may have arrived too.
    expect(texts.length).toBeGreaterThanOrEqual(sum('delivered'));
    expect(texts.length).toBeLessThanOrEqual(sum('delivered') + sum('unknown'));
    expect(tooManyRequests(mock)).toBe(0);
    // On time: the small accounts' sends and every reply started within the bound of being added,
    // while the campaign ran (the campaign account's reply: plus a dead worker's lock, which may hold
    // its places in flight until the next worker takes its jobs).
    const late: string[] = [];
    // The first sends of the small accounts all went before the campaign's first fifth: none waited for it.
    const firstKillAt = mock.account('shop-1').deliveries[FIRST_KILL - 1]?.at ?? 0;
    for (const account of small) {
      for (const d of mock.account(account).deliveries) {
        if (/ s[12]$/.test(String(d.items[0]?.msg)) && d.at > firstKillAt) late.push(String(d.items[0]?.msg));
      }
    }
    for (const { username } of SERVED) {
      for (const d of mock.account(username).deliveries) {
        const text = String(d.items[0]?.msg);
        const added = addedAt.get(text);
        if (added === undefined) continue;
        const bound = username === 'shop-1' ? BOUND_MS + LOCK_MS : BOUND_MS;
        if (d.at - added > bound) late.push(`${text}: ${d.at - added} ms`);
      }
    }
    expect(late).toEqual([]);
  }, 180_000);
});
