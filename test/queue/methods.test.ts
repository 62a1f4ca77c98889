// Every send method of the outbox reaches the API through the client with the may-have-left record
// written just before its request left (the hook survives the broadcasts' and sendVideo's options).
import { afterEach, describe, expect, it } from 'vitest';
import { createOutbox, type Outbox, type OutboxEntry } from '../../src/queue/index.js';
import { DEFAULT_GREETING } from '../../src/testing/index.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';
import { REDIS_SERVER, useRedisServer } from '../redis/redis-server.js';

const TICKET = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const UUID = 'f0e1d2c3-b4a5-4968-8776-655443322110';
const RECORD = {
  id: 'b-1',
  data: [{ type: 'message', msg: 'Hello' }],
  broadcast_at: '2026-11-22 10:00:00',
  created_at: '2026-11-22 09:59:59',
  estimate_time_detail: { total_job_time_minutes: 1 },
};

const ENTRIES: OutboxEntry[] = [
  { method: 'sendText', params: { user_id: 'u1', msg: 'hi' }, key: 'text' },
  { method: 'sendImage', params: { user_id: 'u1', image_url: 'https://example.com/a.png' }, key: 'image' },
  {
    method: 'sendAudio',
    params: {
      user_id: 'u1',
      audio_url: 'https://example.com/a.mp3',
      audio_uuid: UUID,
      audio_size: 1,
      audio_duration: 1,
    },
    key: 'audio',
  },
  { method: 'sendVideo', params: { user_id: 'u1', ticket_id: TICKET }, key: 'video' },
  { method: 'sendGreeting', params: { user_id: 'u1' }, key: 'greeting' },
  {
    method: 'broadcast',
    params: { target: 'all', items: [{ type: 'video', msg: TICKET }] },
    key: 'all',
  },
  {
    method: 'broadcastToGroup',
    params: { account_provider_group_id: UUID, items: [{ type: 'message', msg: 'x' }] },
    key: 'group',
  },
  {
    method: 'broadcastToMemberSession',
    params: { member_group_broadcast_id: UUID, items: [{ type: 'message', msg: 'x' }] },
    key: 'session',
  },
];

describe.skipIf(!REDIS_SERVER)('outbox methods', () => {
  const shared = useRedisServer();
  // A video broadcast first confirms its ticket through the probe user.
  const { setup, sends } = clientFixture({ maxRetries: 0, videoProbeUserId: 'probe' });
  let outbox: Outbox | undefined;

  afterEach(async () => {
    await outbox?.close();
    outbox = undefined;
  });

  it('each method is sent once, with its record written before the request left', async () => {
    const recordsAtSend: (string | null)[] = [];
    const { client } = await setup(
      tokensThen(async (req, res) => {
        const key = ENTRIES.find((e) => req.url?.includes(pathOf(e.method)))?.key ?? '?';
        recordsAtSend.push(await shared.redis.hget(`bull:m:oa:job:k-${key}`, 'sent'));
        if (req.url?.includes('/message/')) return json(res, 200, { data: RECORD });
        return json(res, 201, { data: req.url?.includes('greeting') ? DEFAULT_GREETING : 'success' });
      }),
    );
    outbox = createOutbox({ connection: { url: shared.server.url }, name: 'm' });
    await outbox.addMany(ENTRIES);
    const worker = outbox.work({ client, concurrency: 3 });
    const deadline = Date.now() + 15_000;
    while ((await outbox.counts()).delivered < ENTRIES.length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await worker.close();
    expect(await outbox.counts()).toMatchObject({ delivered: ENTRIES.length, failed: 0, unknown: 0 });
    // The video broadcast may first confirm its ticket through the probe.
    expect(sends().length).toBeGreaterThanOrEqual(ENTRIES.length);
    expect(recordsAtSend.every((record) => record !== null)).toBe(true);
  });
});

function pathOf(method: string): string {
  return {
    sendText: '/webhook/broadcast-message',
    sendImage: '/webhook/broadcast-image-link',
    sendAudio: '/webhook/broadcast-audio',
    sendVideo: '/webhook/broadcast-video',
    sendGreeting: '/webhook/broadcast-greeting',
    broadcast: '/message/broadcast-message',
    broadcastToGroup: '/message/broadcast-group-message',
    broadcastToMemberSession: '/message/broadcast-member-session',
  }[method] as string;
}
