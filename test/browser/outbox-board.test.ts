// bull-board, opened in a real Chromium, lists each account's waiting jobs: an Express server with
// bull-board's ExpressAdapter and outboxBoardAdapters(outbox) over a real redis-server, an outbox of
// two shards holding jobs of two accounts parked until their turn (no worker runs), and each queue's
// Waiting tab opened in headless Chromium. bull-board's own BullMQAdapter lists none of these jobs.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBullBoard } from '@bull-board/api';
import { ExpressAdapter } from '@bull-board/express';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutbox, type Outbox, outboxBoardAdapters } from '../../src/queue/index.js';
import { REDIS_SERVER, type RedisServer, startRedis } from '../redis/redis-server.js';
import { type Browser, haveChromium, launchChromium } from './chromium.js';

const BASE = '/admin/queues';
const ACCOUNT_JOBS = ['a-shop-1/order-1', 'a-shop-1/order-2', 'a-shop-2/order-3'];

describe.skipIf(!haveChromium || !REDIS_SERVER)("bull-board in Chromium: each account's waiting jobs", () => {
  let redis: RedisServer;
  let outbox: Outbox;
  let server: Server;
  let url: string;
  let browser: Browser | undefined;
  const shots = mkdtempSync(join(tmpdir(), 'oa-board-shots-'));

  beforeAll(async () => {
    redis = await startRedis();
    outbox = createOutbox({ connection: { url: redis.url }, name: 'board', shards: 2 });
    await outbox.addMany(
      ACCOUNT_JOBS.map((id) => {
        const [account, key] = id.slice(2).split('/') as [string, string];
        return { method: 'sendText' as const, params: { user_id: 'u', msg: key }, key, account };
      }),
    );
    const serverAdapter = new ExpressAdapter().setBasePath(BASE);
    createBullBoard({ queues: outboxBoardAdapters(outbox), serverAdapter });
    const app = express();
    app.use(BASE, serverAdapter.getRouter());
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${BASE}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
    await outbox?.close();
    await redis?.stop();
    rmSync(shots, { recursive: true, force: true });
  }, 30_000);

  it('lists every parked job of both accounts under Waiting, across the shards', {
    timeout: 60_000,
  }, async () => {
    const page = (browser as Browser).page;
    const seen = new Set<string>();
    // Each queue's Waiting tab, as a person clicks through them: the job ids are on the page.
    for (const name of outboxBoardAdapters(outbox).map((adapter) => adapter.getName())) {
      await page.goto(`${url}/queue/${encodeURIComponent(name)}?status=waiting`, { timeout: 15_000 });
      // The board renders from its API: wait for this queue's answer, then for the page to show it.
      await page.waitForResponse((r) => r.url().includes('/api/queues') && r.ok(), { timeout: 10_000 });
      await page.waitForLoadState('networkidle', { timeout: 10_000 });
      for (const id of ACCOUNT_JOBS) {
        if ((await page.getByText(id).filter({ visible: true }).count()) > 0) seen.add(id);
      }
      await page.screenshot({ path: join(shots, `${encodeURIComponent(name)}.png`), timeout: 10_000 });
    }
    expect([...seen].sort()).toEqual(ACCOUNT_JOBS);
  });
});
