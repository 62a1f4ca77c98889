// An operator's hold on an account (`outbox.pause({ account })`) is not a failed try in the outbox's
// traces: a job admitted before the pause, taken and put back while the hold lasts, leaves no span of
// a failure or a retry. Against a real redis-server and the fake OA server, spans read back from an
// in-memory exporter.
import { describe, expect, it } from 'vitest';
import { createAccounts } from '../../src/index.js';
import { createOutbox } from '../../src/queue/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { accountStore, servedAccounts, texts } from '../accounts/support.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';
import { useGlobalSpans } from './otel.js';

const exporter = useGlobalSpans();

describe.skipIf(!REDIS_SERVER)("an operator's hold in the outbox's traces", () => {
  const shared = useRedisServer();

  it('a job put back while its account is held leaves no span of a failed or retried try', async () => {
    const served = servedAccounts(1);
    const mock = await createMockServer({ accounts: served, rateLimit: false });
    const accounts = createAccounts({
      credentials: accountStore(served).credentials,
      clientOptions: { baseUrl: mock.url, maxRetries: 0 },
    });
    const outbox = createOutbox({ connection: { url: shared.server.url }, name: 'held-traced' });
    // The first send is slow at the OA: while it is out, the second is admitted to BullMQ's wait list.
    mock
      .account('shop-1')
      .injectFault({ kind: 'delay', delayMs: 1000 }, { path: '/broadcast-message', times: 1 });
    await outbox.addMany(
      ['j0', 'j1'].map((key) => ({
        method: 'sendText' as const,
        params: { user_id: 'u', msg: key },
        key,
        account: 'shop-1',
      })),
    );
    const worker = outbox.work({ accounts, concurrency: 1 });
    try {
      await expect
        .poll(() => mock.account('shop-1').requests.length, { timeout: 5000, interval: 20 })
        .toBeGreaterThan(1);
      await expect
        .poll(async () => (await outbox.accounts())[0]?.oldestWaitingMs, { timeout: 5000, interval: 20 })
        .toBeUndefined();
      await outbox.pause({ account: 'shop-1' });
      await outbox.waitFor(['j0'], { account: 'shop-1', timeoutMs: 5000 });
      // j1 is taken and put back about once a second while the hold lasts.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(texts(mock, 'shop-1')).toEqual(['j0']);
      await outbox.resume({ account: 'shop-1' });
      await outbox.waitFor(['j1'], { account: 'shop-1', timeoutMs: 10_000 });
    } finally {
      await worker.close();
      await outbox.close();
      await accounts.close();
      await mock.close();
    }
    const processed = exporter.getFinishedSpans().filter((s) => s.name.startsWith('process '));
    expect(processed.map((s) => s.attributes['oa.job.state'])).toEqual(['delivered', 'delivered']);
  });
});
