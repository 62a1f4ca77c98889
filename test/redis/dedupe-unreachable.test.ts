// The webhook's Redis dedupe store while Redis does not answer: the delivery is processed anyway (its
// onEvent runs once) and answered 200 within the store's bound, not when Redis comes back; once it is
// back, the same store deduplicates again.
import { afterEach, describe, expect, it } from 'vitest';
import { OAConfigError } from '../../src/errors.js';
import { createRedisDedupeStore, type RedisDedupeStore } from '../../src/redis/index.js';
import { createWebhookHandler, type WebhookEvent } from '../../src/webhook/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { type Listening, listen } from '../helpers/listen.js';
import { post, recordingLogger, textEvent } from '../webhook/support.js';
import { OUTAGES, type Outage, outage } from './outages.js';
import { REDIS_SERVER, useRedisServer } from './redis-server.js';

/** The store's default bound is 2 s; the answer may take that and a little more, never Redis's return. */
const ANSWER_WITHIN_MS = 3_500;

const textOf = (event: WebhookEvent) =>
  (event as { data?: { MsgBody?: { MsgContent?: { Text?: string } }[] } }).data?.MsgBody?.[0]?.MsgContent
    ?.Text;

describe('createRedisDedupeStore commandTimeoutMs', () => {
  it('refuses a bound that is not a positive number of ms, at creation', () => {
    for (const commandTimeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '2000']) {
      expect(() =>
        createRedisDedupeStore({ url: 'redis://127.0.0.1:1', commandTimeoutMs: commandTimeoutMs as never }),
      ).toThrow(OAConfigError);
    }
  });
});

describe.skipIf(!REDIS_SERVER)('the webhook with its Redis dedupe store unreachable', () => {
  const shared = useRedisServer();
  let cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    // Redis back first, so that nothing left waiting on it holds the closing.
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });

  /** A node handler on a real HTTP server, deduplicating in a Redis store at `outage.url`. */
  async function receiver(target: Outage, commandTimeoutMs?: number) {
    const store: RedisDedupeStore = createRedisDedupeStore({
      url: target.url,
      prefix: `down-${Math.random()}:`,
      ...(commandTimeoutMs === undefined ? {} : { commandTimeoutMs }),
    });
    const texts: (string | undefined)[] = [];
    const { lines, logger } = recordingLogger();
    const handler = createWebhookHandler({
      dedupe: { store },
      logger,
      onEvent: (event) => {
        texts.push(textOf(event));
      },
    });
    const http: Listening = await listen((req, res) => void handler(req, res));
    cleanup.push(
      () => store.close(),
      () => http.close(),
      () => target.end(),
    );
    const deliver = (text: string, seq: number) =>
      settleWithin(post(http.url, textEvent(text, seq)), 10_000, `the answer to "${text}"`);
    return { store, texts, lines, deliver };
  }

  it.each(OUTAGES)(
    '%s: onEvent runs once and the answer is 200 within the bound; once Redis is back it deduplicates again',
    async (name) => {
      const target = await outage(name, shared.server, shared.redis);
      const { store, texts, lines, deliver } = await receiver(target);
      if (target.comesBack) {
        // The store's connection is open and working before the outage.
        const before = await deliver('before', 1);
        expect(before.ok && before.value.status).toBe(200);
      }
      await target.begin();

      const during = await deliver('during', 2);
      expect(during.ok && during.value.status, 'the answer').toBe(200);
      expect(during.ok && during.value.json, 'the answer').toEqual({ ok: true });
      expect(during.ms, 'how long the answer took').toBeLessThan(ANSWER_WITHIN_MS);
      expect(texts).toEqual(target.comesBack ? ['before', 'during'] : ['during']);
      expect(lines.map((line) => `${line.level}: ${line.message}`)).toContain(
        'error: oa-messaging webhook: the dedupe store failed to claim a message',
      );

      if (!target.comesBack) return;
      await target.end();
      // The same store: once it answers again, a message is processed once and its redelivery skipped.
      const back = await settleWithin(
        (async () => {
          while (
            (await Promise.resolve(store.claim('probe', 'test', 1_000)).catch(() => undefined)) !== 'claimed'
          ) {
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        })(),
        10_000,
        'the store answering again',
      );
      expect(back.ok).toBe(true);
      const after = await deliver('after', 3);
      const again = await deliver('after', 3);
      expect(after.ok && after.value.json).toEqual({ ok: true });
      expect(again.ok && again.value.json).toEqual({ ok: true, duplicate: true });
      expect(texts).toEqual(['before', 'during', 'after']);
    },
    40_000,
  );

  it('the bound is the store commandTimeoutMs', async () => {
    const target = await outage('black-holed', shared.server, shared.redis);
    const { texts, deliver } = await receiver(target, 300);
    const during = await deliver('quick', 4);
    expect(during.ok && during.value.status).toBe(200);
    expect(during.ms).toBeLessThan(1_500);
    expect(texts).toEqual(['quick']);
  }, 20_000);
});
