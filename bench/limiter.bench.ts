/**
 * Limiter utilisation under sustained load: many more sends than one window allows, against the fake OA
 * server enforcing the same limit in a sliding window (in its own process). Reports the achieved rate
 * after the first burst over the allowed rate, and the 429s the server answered.
 *
 *   npx tsx bench/limiter.bench.ts
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { OAClient } from '../src/index.js';

const LIMIT = { max: 50, windowMs: 1000 };
/** Ten windows' worth of sends: one burst, then nine windows of sustained load. */
const SENDS = LIMIT.max * 10;

const server = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    `import { createMockServer } from ${JSON.stringify(new URL('../src/testing/index.ts', import.meta.url).href)};
     const mock = await createMockServer({ rateLimit: { general: ${JSON.stringify(LIMIT)}, mode: 'sliding' } });
     console.log(mock.url);
     process.stdin.on('end', () => mock.close()).resume();`,
  ],
  { stdio: ['pipe', 'pipe', 'inherit'] },
);
const [line] = (await once(server.stdout, 'data')) as [Buffer];
const url = line.toString().trim();

const client = new OAClient({
  baseUrl: url,
  apiKey: 'test-api-key',
  apiSecret: 'test-api-secret',
  rateLimit: { general: LIMIT },
});
await client.generateToken();
// The login used a slot: wait a window so the measurement starts with a full reservoir.
await new Promise((resolve) => setTimeout(resolve, LIMIT.windowMs + 100));

const sent: number[] = [];
let rejected = 0;
client.on('request', () => sent.push(performance.now()));
client.on('response', (event) => {
  if (event.status === 429) rejected++;
});
await Promise.all(
  Array.from({ length: SENDS }, (_, i) => client.sendText({ user_id: `user-${i}`, msg: `message ${i}` })),
);
await client.close();
server.stdin.end();

const first = sent[0] ?? 0;
const last = sent[sent.length - 1] ?? 0;
// After the first burst of `max`, the rest can go at most `max` per window: the ideal span is
// (SENDS - max) / max windows.
const allowedPerMs = LIMIT.max / LIMIT.windowMs;
const achievedPerMs = (SENDS - LIMIT.max) / (last - first);
const utilisation = achievedPerMs / allowedPerMs;

console.log(
  `limit: ${LIMIT.max} requests per ${LIMIT.windowMs} ms (sliding window, server in its own process)`,
);
console.log(`sends: ${SENDS}, all at once; requests sent: ${sent.length}`);
console.log(`span from the first to the last request: ${Math.round(last - first)} ms`);
console.log(`achieved rate after the first burst: ${(achievedPerMs * 1000).toFixed(1)}/s`);
console.log(`allowed rate: ${(allowedPerMs * 1000).toFixed(1)}/s`);
console.log(`utilisation: ${utilisation.toFixed(3)}, 429 answers: ${rejected}`);
const ok = utilisation >= 0.95 && rejected === 0;
console.log(ok ? 'goal met: utilisation >= 0.95 with zero 429s' : 'GOAL MISSED');
process.exitCode = ok ? 0 : 1;
