import { describe, expect, it } from 'vitest';
import { items, OAClient, OAJobBusyError, OANotFoundError } from '../../src/index.js';
import type { MockServer, MockServerOptions } from '../../src/testing/index.js';
import { API, manualClock, mockServerFixture, post, TIMESTAMP } from './support.js';

const fixture = mockServerFixture();
const start = async (options: MockServerOptions = {}) => {
  const fake = await fixture.start(options);
  return { fake, client: fixture.connect(fake), token: fake.issueTokenPair().access_token };
};

const GROUP = '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b';
const text = (msg: string) => ({ type: 'message', msg });

describe('JSON endpoints', () => {
  it('answer the spec envelopes and record one delivery per accepted send', async () => {
    const { fake, client } = await start();
    expect(await client.sendText({ user_id: 'u1', msg: 'hello', desc: 'push' })).toBe('success');
    expect(
      await client.sendImage({ user_id: 'u2', image_url: 'https://cdn.test/a.png', link: 'https://x.test' }),
    ).toBe('success');
    const record = await client.broadcast({
      target: 'selected',
      user_ids: ['u1', 'u2'],
      items: [items.text('hi')],
    });
    expect(record).toEqual({
      id: expect.any(String),
      data: [{ type: 'message', msg: 'hi' }],
      broadcast_at: expect.stringMatching(TIMESTAMP),
      created_at: expect.stringMatching(TIMESTAMP),
      estimate_time_detail: { total_job_time_minutes: 0 },
    });
    await client.broadcastToGroup({ account_provider_group_id: GROUP, items: [items.text('g')] });
    await client.broadcastToMemberSession({ member_group_broadcast_id: GROUP, items: [items.text('m')] });
    expect(
      fake.deliveries.map(({ endpoint, target, user_ids, items }) => ({ endpoint, target, user_ids, items })),
    ).toEqual([
      {
        endpoint: 'sendText',
        target: 'user',
        user_ids: ['u1'],
        items: [{ type: 'message', msg: 'hello', desc: 'push' }],
      },
      {
        endpoint: 'sendImage',
        target: 'user',
        user_ids: ['u2'],
        items: [{ type: 'oa_image_link', msg: 'https://cdn.test/a.png', link: 'https://x.test' }],
      },
      { endpoint: 'broadcast', target: 'selected', user_ids: ['u1', 'u2'], items: [text('hi')] },
      { endpoint: 'broadcastToGroup', target: 'group', user_ids: [], items: [text('g')] },
      { endpoint: 'broadcastToMemberSession', target: 'member-session', user_ids: [], items: [text('m')] },
    ]);
    expect(fake.deliveries[2]?.id).toBe(record.id);
    expect(fake.deliveries[3]?.account_provider_group_id).toBe(GROUP);
    const sent = fake.requests.find((r) => r.path === `${API}/webhook/broadcast-message`);
    expect(sent).toMatchObject({
      method: 'POST',
      status: 201,
      outcome: 'answered',
      body: { user_id: 'u1', msg: 'hello', desc: 'push' },
      headers: { 'content-type': 'application/json', authorization: expect.stringMatching(/^Bearer /) },
    });
  });

  it.each([
    ['a missing user_id', '/webhook/broadcast-message', { msg: 'x' }, 'user_id should not be empty'],
    [
      'a wrong target',
      '/message/broadcast-message',
      { target: 'some', items: [text('x')] },
      'target must be one of',
    ],
    [
      'more than 5 items',
      '/message/broadcast-message',
      { target: 'all', items: Array.from({ length: 6 }, () => text('x')) },
      'items must contain no more than 5 elements',
    ],
    [
      'a desc of 171 characters',
      '/message/broadcast-message',
      { target: 'all', items: [{ ...text('x'), desc: 'd'.repeat(171) }] },
      'items.0.desc must be shorter than or equal to 170 characters',
    ],
    [
      'no user_ids for selected',
      '/message/broadcast-message',
      { target: 'selected', items: [text('x')] },
      'user_ids',
    ],
    [
      'an oa_image_link without link',
      '/message/broadcast-message',
      { target: 'all', items: [{ type: 'oa_image_link', msg: 'https://a.test/i.png' }] },
      'items.0.link',
    ],
    [
      'an audio item without its values',
      '/message/broadcast-message',
      { target: 'all', items: [{ type: 'audio', msg: 'https://a.test/a.mp3' }] },
      'items.0.audio_uuid',
    ],
    [
      'a group id that is not a UUID',
      '/message/broadcast-group-message',
      { account_provider_group_id: 'g1', items: [text('x')] },
      'must be a UUID',
    ],
    [
      'an image_url that is not a URL',
      '/webhook/broadcast-image-link',
      { user_id: 'u', image_url: 'nope' },
      'image_url must be a URL address',
    ],
  ])('refuse %s with 400 BAD_REQUEST in the data layout', async (_, path, body, info) => {
    const { fake, token } = await start();
    const res = await post(fake.url, path, body, { token });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      statusCode: 400,
      data: { statusCode: 400, code: 'BAD_REQUEST', info: expect.stringContaining(info) },
      timestamp: expect.stringMatching(TIMESTAMP),
      path: `${API}${path}`,
    });
    expect(fake.deliveries).toEqual([]);
  });

  it('accepts a desc of exactly 170 characters (emoji count once) and refuses malformed JSON', async () => {
    const { fake, token } = await start();
    const desc = '😀'.repeat(170);
    const ok = await post(
      fake.url,
      '/message/broadcast-message',
      { target: 'all', items: [{ ...text('x'), desc }] },
      { token },
    );
    expect(ok.status).toBe(201);
    const bad = await post(fake.url, '/webhook/broadcast-message', undefined, { token, raw: '{"user_id":' });
    expect(bad.status).toBe(400);
  });

  it('answers 404 NOT_FOUND to an unknown path', async () => {
    const { fake, token } = await start();
    const res = await post(fake.url, '/webhook/nothing-here', {}, { token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, data: { code: 'NOT_FOUND' } });
  });
});

describe('greeting (endpoint 3)', () => {
  it('sends the configured greeting', async () => {
    const { fake, client } = await start();
    const greeting = await client.sendGreeting({ user_id: 'u1' });
    expect(greeting).toEqual(fake.greeting);
    expect(fake.deliveries).toMatchObject([
      { endpoint: 'sendGreeting', user_ids: ['u1'], items: greeting.data },
    ]);
  });

  it('answers 404 NOT_FOUND when the provider has no greeting (greeting: null)', async () => {
    const { fake, client, token } = await start({ greeting: null });
    const res = await post(fake.url, '/webhook/broadcast-greeting', { user_id: 'u1' }, { token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ statusCode: 404, data: { statusCode: 404, code: 'NOT_FOUND' } });
    await expect(client.sendGreeting({ user_id: 'u1' })).rejects.toBeInstanceOf(OANotFoundError);
    expect(fake.deliveries).toEqual([]);
  });

  it('answers 404 for a user outside knownUsers', async () => {
    const { fake, token } = await start({ knownUsers: ['u1'] });
    expect((await post(fake.url, '/webhook/broadcast-greeting', { user_id: 'u1' }, { token })).status).toBe(
      201,
    );
    expect((await post(fake.url, '/webhook/broadcast-greeting', { user_id: 'u9' }, { token })).status).toBe(
      404,
    );
  });
});

describe('broadcast jobs', () => {
  it('answers 400 JOB_BUSY while a broadcast job runs, to all three broadcast endpoints', async () => {
    const clock = manualClock();
    const { fake, token } = await start({ now: clock.now, broadcastJobMs: 120_000 });
    const first = await post(
      fake.url,
      '/message/broadcast-message',
      { target: 'all', items: [text('1')] },
      { token },
    );
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ data: { estimate_time_detail: { total_job_time_minutes: 2 } } });
    clock.advance(119_999);
    const busy = [
      await post(fake.url, '/message/broadcast-message', { target: 'all', items: [text('2')] }, { token }),
      await post(
        fake.url,
        '/message/broadcast-group-message',
        { account_provider_group_id: GROUP, items: [text('3')] },
        { token },
      ),
      await post(
        fake.url,
        '/message/broadcast-member-session',
        { member_group_broadcast_id: GROUP, items: [text('4')] },
        { token },
      ),
    ];
    for (const res of busy) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, data: { statusCode: 400, code: 'JOB_BUSY' } });
    }
    // Single-user sends are not jobs.
    expect(
      (await post(fake.url, '/webhook/broadcast-message', { user_id: 'u', msg: 'x' }, { token })).status,
    ).toBe(201);
    clock.advance(1);
    expect(
      (await post(fake.url, '/message/broadcast-message', { target: 'all', items: [text('5')] }, { token }))
        .status,
    ).toBe(201);
    expect(fake.deliveries.map((d) => d.items[0]?.msg)).toEqual(['1', 'x', '5']);
  });

  it('the SDK sees JOB_BUSY as OAJobBusyError (with retries off)', async () => {
    const { fake } = await start({ broadcastJobMs: 60_000 });
    const noRetry = new OAClient({
      baseUrl: fake.url,
      apiKey: fake.apiKey,
      apiSecret: fake.apiSecret,
      maxRetries: 0,
    });
    try {
      await noRetry.broadcast({ target: 'all', items: [items.text('a')] });
      const error = await noRetry
        .broadcast({ target: 'all', items: [items.text('b')] }, { timeoutMs: 2000 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OAJobBusyError);
    } finally {
      await noRetry.close();
    }
  }, 20_000);
});

describe('video tickets', () => {
  const uploadVideo = async (fake: MockServer, token: string) => {
    const { multipart } = await import('./support.js');
    const { raw, headers } = await multipart('video', new Uint8Array(64), 'video/mp4', 'clip.mp4');
    const res = await post(fake.url, '/upload/video', undefined, { raw, headers, token });
    expect(res.status).toBe(201);
    return (res.body as { data: { ticket_id: string } }).data.ticket_id;
  };

  it('stays in convert status for transcodeMs: 400, then success', async () => {
    const clock = manualClock();
    const { fake, token } = await start({ now: clock.now, transcodeMs: 5000 });
    const ticket_id = await uploadVideo(fake, token);
    expect(ticket_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    const converting = await post(
      fake.url,
      '/webhook/broadcast-video',
      { user_id: 'u1', ticket_id },
      { token },
    );
    expect(converting.status).toBe(400);
    expect(converting.body).toMatchObject({
      data: { code: 'BAD_REQUEST', info: 'Video is in convert status' },
    });
    clock.advance(5000);
    const sent = await post(fake.url, '/webhook/broadcast-video', { user_id: 'u1', ticket_id }, { token });
    expect(sent.status).toBe(201);
    expect(fake.deliveries).toMatchObject([
      { endpoint: 'sendVideo', items: [{ type: 'video', msg: ticket_id }] },
    ]);
  });

  it('converts in real time', async () => {
    // Long enough that the first send comes before the end on a loaded machine.
    const { fake, token } = await start({ transcodeMs: 3000 });
    const ticket_id = await uploadVideo(fake, token);
    const send = () => post(fake.url, '/webhook/broadcast-video', { user_id: 'u1', ticket_id }, { token });
    expect((await send()).status).toBe(400);
    await new Promise((resolve) => setTimeout(resolve, 3200));
    expect((await send()).status).toBe(201);
  });

  it("lets the SDK's sendVideo wait out the convert status: one delivery after the 400s", async () => {
    const { fake, client, token } = await start({ transcodeMs: 500 });
    const ticket_id = await uploadVideo(fake, token);
    expect(await client.sendVideo({ user_id: 'u1', ticket_id })).toBe('success');
    const answers = fake.requests.filter((r) => r.path.endsWith('/broadcast-video')).map((r) => r.status);
    expect(answers.at(-1)).toBe(201);
    expect(answers.slice(0, -1).every((status) => status === 400)).toBe(true);
    expect(fake.deliveries).toHaveLength(1);
  });

  it('answers 404 to an unknown ticket; completeTranscodes() ends the wait at once', async () => {
    const { fake, token } = await start({ transcodeMs: 3_600_000 });
    const unknown = '00000000-0000-4000-8000-000000000000';
    const res = await post(
      fake.url,
      '/webhook/broadcast-video',
      { user_id: 'u1', ticket_id: unknown },
      { token },
    );
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ data: { code: 'NOT_FOUND' } });
    const ticket_id = await uploadVideo(fake, token);
    fake.completeTranscodes(ticket_id);
    expect(
      (await post(fake.url, '/webhook/broadcast-video', { user_id: 'u1', ticket_id }, { token })).status,
    ).toBe(201);
  });

  it('a broadcast with a converting video item is accepted but its job fails', async () => {
    const { fake, token } = await start();
    const ticket_id = await uploadVideo(fake, token);
    const res = await post(
      fake.url,
      '/message/broadcast-message',
      { target: 'all', items: [{ type: 'video', msg: ticket_id }] },
      { token },
    );
    expect(res.status).toBe(201);
    expect(fake.deliveries[0]?.failure).toBe('Video is in convert status');
  });

  it('every mass broadcast fails its job on a converting or unknown ticket, and runs it once converted', async () => {
    const clock = manualClock();
    const { fake, token } = await start({ now: clock.now, transcodeMs: 5000 });
    const ticket_id = await uploadVideo(fake, token);
    const video = [{ type: 'video', msg: ticket_id }];
    const unknown = [{ type: 'video', msg: '00000000-0000-4000-8000-000000000000' }];
    const group = { account_provider_group_id: '0b7e4a52-2a8e-4b6e-9d55-3f1b7c1e9a10' };
    const session = { member_group_broadcast_id: '5d1c2b8e-7f4a-4c3d-8e9f-1a2b3c4d5e6f' };
    const broadcastAll = async (items: unknown[]) => {
      for (const [path, body] of [
        ['/message/broadcast-message', { target: 'selected', user_ids: ['u1', 'u2'] }],
        ['/message/broadcast-group-message', group],
        ['/message/broadcast-member-session', session],
      ] as const) {
        expect((await post(fake.url, path, { ...body, items }, { token })).status).toBe(201);
      }
    };
    await broadcastAll(video);
    await broadcastAll(unknown);
    clock.advance(5000);
    await broadcastAll(video);
    expect(fake.deliveries.map((d) => [d.endpoint, d.failure])).toEqual([
      ['broadcast', 'Video is in convert status'],
      ['broadcastToGroup', 'Video is in convert status'],
      ['broadcastToMemberSession', 'Video is in convert status'],
      ['broadcast', 'Video ticket not found'],
      ['broadcastToGroup', 'Video ticket not found'],
      ['broadcastToMemberSession', 'Video ticket not found'],
      ['broadcast', undefined],
      ['broadcastToGroup', undefined],
      ['broadcastToMemberSession', undefined],
    ]);
  });
});

describe('paths that are not endpoints', () => {
  it('a name every object has (constructor, toString) is a 404, not a crash', async () => {
    const { fake, token } = await start();
    for (const path of ['/constructor', '/toString', '/__proto__']) {
      const res = await post(fake.url, path, {}, { token });
      expect(res.status).toBe(404);
    }
  });
});
