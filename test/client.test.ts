import { HttpResponse, http } from 'msw';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  type BroadcastRecord,
  type Greeting,
  items,
  OAClient,
  type TokenPair,
  VERSION,
} from '../src/index.js';
import { type MswServer, startMswServer } from './helpers/msw-server.js';
import { tokenPair } from './helpers/tokens.js';

const API = '/api/v2/public';
const GROUP = '0b5c9f4e-3a8e-4c59-9d1e-2f3a4b5c6d7e';
const SESSION = '7d6c5b4a-3f2e-4d1c-8b9a-0e1f2a3b4c5d';
const TICKET = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const AUDIO_UUID = 'f0e1d2c3-b4a5-4968-8776-655443322110';
const first = tokenPair(1);

const record = {
  id: 'b-1',
  data: [{ type: 'message', msg: 'Hello' }],
  broadcast_at: '2026-11-22 10:00:00',
  created_at: '2026-11-22 09:59:59',
  estimate_time_detail: { total_job_time_minutes: 1 },
};

let server: MswServer;
let client: OAClient;

beforeAll(async () => {
  server = await startMswServer(
    http.post(`*${API}/auth/token`, () => HttpResponse.json({ data: first }, { status: 201 })),
    http.post(`*${API}/auth/refresh-token`, () => HttpResponse.json({ data: tokenPair(2) }, { status: 201 })),
  );
});
afterEach(async () => {
  server.reset();
  await client?.close();
});
afterAll(() => server.close());

function newClient() {
  client = new OAClient({ baseUrl: server.url, apiKey: 'key-123456', apiSecret: 'secret-abcdef' });
  return client;
}

/** The requests to `path`, after the token call. */
const sent = (path: string) => server.requests.filter((r) => r.path === `${API}${path}`);

function expectJsonPost(path: string, body: unknown, auth: string | null = first.access_token) {
  const [req, ...more] = sent(path);
  expect(more).toHaveLength(0);
  expect(req?.method).toBe('POST');
  expect(req?.headers['content-type']).toBe('application/json');
  expect(req?.headers.accept).toBe('application/json');
  expect(req?.headers['user-agent']).toBe(`oa-messaging/${VERSION} node/${process.version}`);
  expect(req?.headers.authorization).toBe(auth === null ? undefined : `Bearer ${auth}`);
  expect(req?.bodyText).toBe(JSON.stringify(body));
}

describe('auth endpoints', () => {
  it('generateToken posts the key and secret without a bearer header and returns the pair', async () => {
    const pair = await newClient().generateToken();
    expectJsonPost('/auth/token', { api_key: 'key-123456', api_secret: 'secret-abcdef' }, null);
    expect(pair).toEqual(first);
    expectTypeOf(pair).toEqualTypeOf<TokenPair>();
    expectTypeOf(pair.access_token).toEqualTypeOf<string>();
  });

  it('refreshToken posts the held refresh token and keeps the new pair for later calls', async () => {
    server.use(http.post(`*${API}/webhook/broadcast-message`, () => HttpResponse.json({ data: 'success' })));
    const c = newClient();
    await c.generateToken();
    const pair = await c.refreshToken();
    expectJsonPost('/auth/refresh-token', { refresh_token: first.refresh_token }, null);
    expect(pair.refresh_token).toBe('refresh-token-2-abcdef');
    await c.sendText({ user_id: 'u1', msg: 'hi' });
    expect(sent('/webhook/broadcast-message')[0]?.headers.authorization).toBe(`Bearer ${pair.access_token}`);
  });

  it('refreshToken takes an explicit refresh token', async () => {
    await newClient().refreshToken('given-refresh-token');
    expectJsonPost('/auth/refresh-token', { refresh_token: 'given-refresh-token' }, null);
  });
});

describe('single-user sends', () => {
  it('sendGreeting posts user_id and returns the greeting', async () => {
    const greeting = {
      id: GROUP,
      title: 'Welcome',
      slug: 'welcome',
      data: [{ type: 'message', msg: 'Hi!' }],
    };
    server.use(http.post(`*${API}/webhook/broadcast-greeting`, () => HttpResponse.json({ data: greeting })));
    const result = await newClient().sendGreeting({ user_id: 'u1' });
    expect(sent('/auth/token')).toHaveLength(1);
    expectJsonPost('/webhook/broadcast-greeting', { user_id: 'u1' });
    expect(result).toEqual(greeting);
    expectTypeOf(result).toEqualTypeOf<Greeting>();
    expectTypeOf(result.data[0]?.msg).toEqualTypeOf<string | undefined>();
  });

  it('sendImage posts user_id, image_url and link', async () => {
    server.use(
      http.post(`*${API}/webhook/broadcast-image-link`, () => HttpResponse.json({ data: 'success' })),
    );
    const params = { user_id: 'u1', image_url: 'https://cdn.example.com/a.png', link: 'https://example.com' };
    expect(await newClient().sendImage(params)).toBe('success');
    expectJsonPost('/webhook/broadcast-image-link', params);
  });

  it('sendImage without link sends no link field', async () => {
    server.use(
      http.post(`*${API}/webhook/broadcast-image-link`, () => HttpResponse.json({ data: 'success' })),
    );
    await newClient().sendImage({ user_id: 'u1', image_url: 'https://cdn.example.com/a.png' });
    expectJsonPost('/webhook/broadcast-image-link', {
      user_id: 'u1',
      image_url: 'https://cdn.example.com/a.png',
    });
  });

  it('sendText posts user_id, msg and desc; a 201 is success', async () => {
    server.use(
      http.post(`*${API}/webhook/broadcast-message`, () =>
        HttpResponse.json({ data: 'success' }, { status: 201 }),
      ),
    );
    const result = await newClient().sendText({ user_id: 'u1', msg: 'Hello', desc: 'New message' });
    expect(result).toBe('success');
    expectTypeOf(result).toEqualTypeOf<'success'>();
    expectJsonPost('/webhook/broadcast-message', { user_id: 'u1', msg: 'Hello', desc: 'New message' });
  });

  it('sendVideo posts user_id and ticket_id', async () => {
    server.use(http.post(`*${API}/webhook/broadcast-video`, () => HttpResponse.json({ data: 'success' })));
    expect(await newClient().sendVideo({ user_id: 'u1', ticket_id: TICKET })).toBe('success');
    expectJsonPost('/webhook/broadcast-video', { user_id: 'u1', ticket_id: TICKET });
  });

  it('sendAudio posts the four audio values unchanged', async () => {
    server.use(http.post(`*${API}/webhook/broadcast-audio`, () => HttpResponse.json({ data: 'success' })));
    const params = {
      user_id: 'u1',
      audio_url: 'https://storage.example.com/a.mp3',
      audio_uuid: AUDIO_UUID,
      audio_size: 12345,
      audio_duration: 7.5,
    };
    expect(await newClient().sendAudio(params)).toBe('success');
    expectJsonPost('/webhook/broadcast-audio', params);
  });

  it('sendAudio({ user_id, ...upload }) still works when the upload answer has a field more', async () => {
    server.use(http.post(`*${API}/webhook/broadcast-audio`, () => HttpResponse.json({ data: 'success' })));
    const upload = {
      audio_url: 'https://storage.example.com/a.mp3',
      audio_uuid: AUDIO_UUID,
      audio_size: 12345,
      audio_duration: 7.5,
      audio_name: 'added by a later API version',
    };
    expect(await newClient().sendAudio({ user_id: 'u1', ...upload })).toBe('success');
    const { audio_name: _dropped, ...sent } = upload;
    expectJsonPost('/webhook/broadcast-audio', { user_id: 'u1', ...sent });
  });
});

describe('broadcasts', () => {
  const everyItem = [
    items.text('Hello', 'Short'),
    items.imageLink('https://cdn.example.com/a.png', 'https://example.com'),
    items.flex({ type: 'bubble', body: { contents: [] } }),
    items.video(TICKET),
    items.audio({
      audio_url: 'https://storage.example.com/a.mp3',
      audio_uuid: AUDIO_UUID,
      audio_size: 100,
      audio_duration: 3,
    }),
  ];

  it('broadcast to all sends target and items, no user_ids, and returns the record', async () => {
    server.use(http.post(`*${API}/message/broadcast-message`, () => HttpResponse.json({ data: record })));
    // The video ticket is taken as ready: the wait for it has tests of its own (video-broadcast).
    const result = await newClient().broadcast(
      { target: 'all', items: everyItem },
      { waitForTranscode: false },
    );
    expectJsonPost('/message/broadcast-message', { target: 'all', items: everyItem });
    expect(result).toEqual(record);
    expect(result.estimate_time_detail.total_job_time_minutes).toBe(1);
    expectTypeOf(result).toEqualTypeOf<BroadcastRecord>();
    expectTypeOf(result.estimate_time_detail.total_job_time_minutes).toEqualTypeOf<number>();
  });

  it('broadcast to selected and single users sends user_ids', async () => {
    server.use(http.post(`*${API}/message/broadcast-message`, () => HttpResponse.json({ data: record })));
    const c = newClient();
    await c.broadcast({
      target: 'selected',
      user_ids: ['u1', 'u2'],
      items: [items.image('https://c.example/x.jpg')],
    });
    await c.broadcast({ target: 'single', user_ids: ['u3'], items: [items.text('Hi')] });
    const [selected, single] = sent('/message/broadcast-message');
    expect(selected?.body).toEqual({
      target: 'selected',
      user_ids: ['u1', 'u2'],
      items: [{ type: 'image', msg: 'https://c.example/x.jpg' }],
    });
    expect(single?.bodyText).toBe(
      JSON.stringify({ target: 'single', user_ids: ['u3'], items: [{ type: 'message', msg: 'Hi' }] }),
    );
  });

  it('broadcastToGroup sends the group id and items', async () => {
    server.use(
      http.post(`*${API}/message/broadcast-group-message`, () => HttpResponse.json({ data: record })),
    );
    const params = { account_provider_group_id: GROUP, items: [items.text('Hello group')] };
    expect(await newClient().broadcastToGroup(params)).toEqual(record);
    expectJsonPost('/message/broadcast-group-message', params);
  });

  it('broadcastToMemberSession sends the session id and items', async () => {
    server.use(
      http.post(`*${API}/message/broadcast-member-session`, () => HttpResponse.json({ data: record })),
    );
    const params = { member_group_broadcast_id: SESSION, items: [items.video(TICKET)] };
    expect(await newClient().broadcastToMemberSession(params, { waitForTranscode: false })).toEqual(record);
    expectJsonPost('/message/broadcast-member-session', params);
  });

  it('keeps fields the API adds that the SDK does not know', async () => {
    const extended = {
      ...record,
      status: 'queued',
      estimate_time_detail: { total_job_time_minutes: 2, jobs: 3 },
    };
    server.use(http.post(`*${API}/message/broadcast-message`, () => HttpResponse.json({ data: extended })));
    const result = await newClient().broadcast({ target: 'all', items: [items.text('x')] });
    expect(result).toEqual(extended);
  });
});

describe('base URL', () => {
  it('keeps a path prefix of the base URL', async () => {
    server.use(http.post(`*/prefix${API}/auth/token`, () => HttpResponse.json({ data: first })));
    client = new OAClient({
      baseUrl: `${server.url}/prefix/`,
      apiKey: 'key-123456',
      apiSecret: 'secret-abcdef',
    });
    await client.generateToken();
    expect(server.requests[0]?.path).toBe(`/prefix${API}/auth/token`);
  });
});
