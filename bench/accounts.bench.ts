/**
 * Many accounts in one process (`createAccounts`): the heap an account's client costs while it was
 * never used and after one send, beside a plain `OAClient` per account; the time of an account's first
 * call (its credentials read through the resolver, its login, its send) beside a call of a client
 * already logged in; and `sendText` through `accounts.client(id)` beside a plain `OAClient`, with the
 * same server and the same token, interleaved in blocks, the median of many rounds.
 *
 *   npx tsx bench/accounts.bench.ts
 *
 * Roles of this one file: no argument = the measurement; `server` = the answering server.
 */
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  fmt,
  median,
  percentile,
  report,
  type SummaryRow,
  serveInstantApi,
  spawnInstantApi,
  table,
} from './support.js';

const SELF = fileURLToPath(import.meta.url);
const ACCOUNTS = 1000;
const WARMUP_CALLS = 3000;
/** Sequential calls in one block; the two contenders take turns block by block. */
const BLOCK = 50;
const BLOCKS = 120;
const GOAL_CALL_RATIO = 1.05;

/** The heap in use after two full collections. */
function heapUsed(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

async function measure(): Promise<void> {
  const { server, baseUrl } = await spawnInstantApi(SELF);
  try {
    const { createAccounts, OAClient } = await import('../src/index.js');
    const ids = Array.from({ length: ACCOUNTS }, (_, i) => `shop-${i}`);
    let asked = 0;
    // A store that answers after a turn of the event loop, as a database would (without its latency).
    const credentials = async (account: string) => {
      asked++;
      await new Promise((resolve) => setImmediate(resolve));
      return { apiKey: `key-${account}`, apiSecret: `secret-${account}` };
    };
    const params = { user_id: 'user-1', msg: 'Your order has shipped', desc: 'Order update' };
    // Limits raised so that no call waits (the cost of the limiter's free-slot path is in both).
    const unlimited = { max: 1e9, windowMs: 60_000 };
    const rateLimit = { general: unlimited, upload: unlimited };

    // Warm the modules and the pool: one account used before anything is counted.
    const accounts = createAccounts({
      credentials,
      clientOptions: { baseUrl, rateLimit },
      maxClients: ACCOUNTS + 10,
    });
    await accounts.client('warm').sendText(params);

    // Heap: the accounts' clients, never used, then after one send each; plain clients, never used.
    const before = heapUsed();
    const clients = ids.map((id) => accounts.client(id));
    const idle = (heapUsed() - before) / ACCOUNTS;
    const firstCalls: number[] = [];
    for (const client of clients) {
      const t = performance.now();
      await client.sendText(params);
      firstCalls.push(performance.now() - t);
    }
    if (asked !== ACCOUNTS + 1) throw new Error(`the resolver was asked ${asked} times`);
    const used = (heapUsed() - before) / ACCOUNTS;
    const plainBefore = heapUsed();
    const plain = ids.map((id) => new OAClient({ baseUrl, apiKey: `key-${id}`, apiSecret: `secret-${id}` }));
    const plainIdle = (heapUsed() - plainBefore) / ACCOUNTS;
    await Promise.all(plain.map((client) => client.close()));
    plain.length = 0;

    // Per call: an account's client (looked up by id each call) and a plain client, both logged in.
    const single = new OAClient({ baseUrl, apiKey: 'key-shop-0', apiSecret: 'secret-shop-0', rateLimit });
    await single.sendText(params);
    const steady: number[] = [];
    const contenders = [
      { name: 'plain `OAClient`', call: () => single.sendText(params), times: steady },
      {
        name: "`accounts.client('shop-0')`",
        call: () => accounts.client('shop-0').sendText(params),
        times: [] as number[],
      },
    ];
    for (const c of contenders) for (let i = 0; i < WARMUP_CALLS; i++) await c.call();
    for (let block = 0; block < BLOCKS; block++) {
      for (const c of block % 2 === 0 ? contenders : [...contenders].reverse()) {
        for (let i = 0; i < BLOCK; i++) {
          const t = performance.now();
          if ((await c.call()) !== 'success') throw new Error('unexpected answer');
          c.times.push(performance.now() - t);
        }
      }
    }
    await single.close();
    await accounts.close();

    const [plainCall, accountCall] = contenders.map((c) => median(c.times)) as [number, number];
    const us = (ms: number) => `${fmt(ms * 1000)} µs`;
    const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`;
    const ratio = accountCall / plainCall;
    const firstCall = median(firstCalls);
    const rows: SummaryRow[] = [
      {
        figure: `heap per account client, never used (${fmt(ACCOUNTS)} accounts)`,
        sdk: kb(idle),
        baseline: `${kb(plainIdle)} (a plain \`OAClient\` each)`,
        ratio: `${(idle / plainIdle).toFixed(2)}x`,
      },
      {
        figure: `heap per account client after one send (${fmt(ACCOUNTS)} accounts)`,
        sdk: kb(used),
        baseline: `${kb(plainIdle)} (a plain \`OAClient\` each, never used)`,
        ratio: `${(used / plainIdle).toFixed(2)}x`,
      },
      {
        figure: "an account's first call (resolver, login, send), median",
        sdk: us(firstCall),
        baseline: `${us(plainCall)} (a call of a client logged in)`,
        ratio: `${(firstCall / plainCall).toFixed(2)}x`,
      },
      {
        figure: '`sendText` through `accounts.client(id)`, time per call, median',
        sdk: us(accountCall),
        baseline: `${us(plainCall)} (plain \`OAClient\`)`,
        ratio: `${ratio.toFixed(2)}x`,
        goal: `<= ${GOAL_CALL_RATIO}x`,
        pass: ratio <= GOAL_CALL_RATIO,
      },
    ];
    report({
      title: 'Many accounts in one process',
      command: 'npx tsx bench/accounts.bench.ts',
      rows,
      details: [
        `\`createAccounts\` with ${fmt(ACCOUNTS)} accounts in one process, against a node:http server in its own`,
        'process that answers at once (every login gets a token, every send `success`). The resolver answers',
        'after a turn of the event loop. Heap: `heapUsed` after two full collections, before and after',
        `making the ${fmt(ACCOUNTS)} clients (\`accounts.client(id)\`), then after one \`sendText\` through each`,
        '(sequential: the first call of each account, timed: the resolver, the login, the send); beside it,',
        `${fmt(ACCOUNTS)} plain \`OAClient\`s made and never used. Per call: \`sendText\` through`,
        "`accounts.client('shop-0')` (the lookup each call) and through a plain `OAClient`, both logged in,",
        'rate limits raised so that no call waits,',
        `${fmt(WARMUP_CALLS)} warm-up calls each, then ${fmt(BLOCK * BLOCKS)} sequential calls each in blocks of`,
        `${BLOCK}, taking turns in alternating order; the median call.`,
        '',
        table(
          ['case', 'median', 'p99'],
          [
            ...contenders.map((c) => [c.name, us(median(c.times)), us(percentile(c.times, 0.99))]),
            ["an account's first call", us(firstCall), us(percentile(firstCalls, 0.99))],
          ],
          '---|---:|---:',
        ),
        '',
        table(
          ['heap per client', 'KB'],
          [
            ['account client, never used', kb(idle)],
            ['account client, after one send', kb(used)],
            ['plain `OAClient`, never used', kb(plainIdle)],
          ],
          '---|---:',
        ),
      ].join('\n'),
    });
  } finally {
    server.stdin?.end();
    server.kill();
  }
}

if (process.argv[2] === 'server') serveInstantApi();
else await measure();
