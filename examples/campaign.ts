/**
 * A campaign that survives crashes: personal messages queued in Redis with `oa-messaging/queue`, sent
 * by workers that share the quota, each message at most once. Needs a local redis-server:
 *
 *   redis-server --port 6379 --save '' --appendonly yes     (in another terminal)
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/campaign.ts
 *
 * Against the fake OA server it sends 120 messages under a small quota (40 per 2 s), so that the
 * progress shows; with your account (OA_BASE_URL, OA_API_KEY, OA_API_SECRET, OA_USER_ID) it sends 3
 * messages to OA_USER_ID under the API's own quota.
 */
import { randomUUID } from 'node:crypto';
import { createOutbox, type OutboxEntry } from 'oa-messaging/queue';
import { createRedisCoordination } from 'oa-messaging/redis';
import { connect } from './support/connect.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const quota = { general: { max: 40, windowMs: 2000 }, upload: { max: 10, windowMs: 2000 } };
// Every worker's client shares one token and the quota through Redis (here two in one process; in
// production, one per process or container).
const coordination = createRedisCoordination({ url });
const { client, mock, userId, close } = await connect({
  fake: { rateLimit: { general: quota.general, mode: 'sliding' } },
  client: { coordination, ...(process.env.OA_BASE_URL ? {} : { rateLimit: quota }) },
});

// A name of this run's own, kept a minute: a rerun starts a new campaign instead of finding its keys.
const outbox = createOutbox({ connection: { url }, name: `campaign-${randomUUID()}`, retentionMs: 60_000 });
const size = mock ? 120 : 3;
const entries: OutboxEntry[] = Array.from({ length: size }, (_, i) => ({
  method: 'sendText',
  params: { user_id: mock ? `customer-${i}` : userId, msg: `Hello customer ${i}, your order has shipped` },
  // The app's idempotency key: adding it again (a retried request, a second producer) keeps one job.
  key: `order-${i}-shipped`,
}));
await outbox.addMany(entries);
await outbox.addMany(entries.slice(0, 10));
console.log(`Queued ${size} messages (10 of them added twice: kept once)`);

// Outcomes as they happen, from every worker of this outbox (in any process): the ones to act on.
let delivered = 0;
outbox.on('delivered', () => delivered++);
outbox.on('failed', (e) => console.log(`  ${e.key} failed: ${e.error.message}`));
outbox.on('unknown', (e) => console.log(`  ${e.key} may or may not have arrived (${e.error.message})`));

const workers = [outbox.work({ client, concurrency: 4 }), outbox.work({ client, concurrency: 4 })];
const started = Date.now();
for (;;) {
  const c = await outbox.counts();
  const done = c.delivered + c.failed + c.unknown;
  console.log(
    `  ${((Date.now() - started) / 1000).toFixed(1)} s: ${done}/${size} done (delivered ${c.delivered}, waiting ${c.waiting}, active ${c.active})`,
  );
  if (done === size) break;
  await new Promise((resolve) => setTimeout(resolve, 1000));
}

const counts = await outbox.counts();
console.log('Final counts:', JSON.stringify(counts));
console.log(`order-0-shipped: ${JSON.stringify(await outbox.get('order-0-shipped'))}`);
if (mock) console.log(`The fake received ${mock.deliveries.length} messages`);
// The last events may still be on their way from Redis: a moment for them (events are news; the
// counts are the record).
for (let i = 0; i < 20 && delivered < counts.delivered; i++) await new Promise((r) => setTimeout(r, 100));
console.log(`Delivered events heard: ${delivered}`);
// `unknown`: it may have been delivered (a worker died while the request was on its way, or its answer
// never came). Check with the user (or your own records) before sending again under a new key; the SDK
// never sends it again by itself. `failed`: certainly not delivered.
if (counts.unknown > 0) console.log(`${counts.unknown} messages may or may not have arrived: check them`);

await Promise.all(workers.map((w) => w.close()));
await outbox.close();
await close();
await coordination.close();
