// The measuring side of bench/runtimes.bench.ts, run in Bun or Deno: `sendText` of the built package
// beside this runtime's own `fetch` of the same request (same URL, body and headers), against the
// local server at OA_BENCH_URL. Sequential blocks then throughput rounds, the two taking turns in an
// order that changes each time; prints one JSON line of the raw figures.
import { OAClient } from 'oa-messaging';

const env = globalThis.Bun ? Bun.env : Deno.env.toObject();
const base = env.OA_BENCH_URL;
const { warmup, block, blocks, inFlight, roundCalls, rounds } = JSON.parse(env.OA_BENCH_SIZES);
const PATH = '/api/v2/public/webhook/broadcast-message';

const client = new OAClient({
  baseUrl: base,
  apiKey: 'bench-key',
  apiSecret: 'bench-secret',
  rateLimit: false,
});
const { access_token } = await client.generateToken();
const params = { user_id: 'user-1', msg: 'Your order has shipped', desc: 'Order update' };
const headers = {
  'content-type': 'application/json',
  accept: 'application/json',
  authorization: `Bearer ${access_token}`,
  'user-agent': 'oa-messaging-bench',
};
const contenders = [
  {
    name: 'fetch',
    call: async () => {
      const res = await fetch(`${base}${PATH}`, { method: 'POST', headers, body: JSON.stringify(params) });
      const answer = await res.json();
      if (res.status !== 200 || answer.data !== 'success') throw new Error('unexpected answer');
    },
    times: [],
    rates: [],
  },
  {
    name: 'sendText',
    call: async () => {
      if ((await client.sendText(params)) !== 'success') throw new Error('unexpected answer');
    },
    times: [],
    rates: [],
  },
];
const rotate = (list, n) => (n % 2 === 0 ? list : [...list].reverse());

async function throughput(call, calls, concurrency) {
  let started = 0;
  const t = performance.now();
  const worker = async () => {
    while (started < calls) {
      started++;
      await call();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return calls / ((performance.now() - t) / 1000);
}

for (const c of contenders) for (let i = 0; i < warmup; i++) await c.call();
for (let b = 0; b < blocks; b++) {
  for (const c of rotate(contenders, b)) {
    for (let i = 0; i < block; i++) {
      const t = performance.now();
      await c.call();
      c.times.push(performance.now() - t);
    }
  }
}
for (let r = 0; r < rounds; r++) {
  for (const c of rotate(contenders, r)) c.rates.push(await throughput(c.call, roundCalls, inFlight));
}
await client.close();
console.log(
  JSON.stringify(Object.fromEntries(contenders.map((c) => [c.name, { times: c.times, rates: c.rates }]))),
);
