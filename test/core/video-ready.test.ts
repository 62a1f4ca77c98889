// Broadcasts of a video wait for its transcode, against the fake OA server: a probe send to a user the
// integrator names confirms the ticket, and a ticket already delivered by sendVideo needs none.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  items,
  OAAbortError,
  type OAClient,
  type OAClientEventName,
  type OAClientEvents,
  OAConfigError,
  OAConnectionError,
  OATranscodeTimeoutError,
  OAValidationError,
  OAVideoNotConfirmedError,
} from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { endTranscodesOnceWaitedFor } from '../helpers/transcode.js';
import { mockServerFixture } from '../testing/support.js';

const clip = fileURLToPath(new URL('../fixtures/media/sample.mp4', import.meta.url));
const GROUP = '0b7e4a52-2a8e-4b6e-9d55-3f1b7c1e9a10';
const SESSION = '5d1c2b8e-7f4a-4c3d-8e9f-1a2b3c4d5e6f';
const USERS = ['user-1', 'user-2', 'user-3'];
/** Converts for a moment: a probe send may meet the convert status (no test here counts on it). */
const CONVERTS_BRIEFLY = { transcodeMs: 300 };
/** Never finishes within a test. */
const CONVERTS_FOREVER = { transcodeMs: 3_600_000 };

const fixture = mockServerFixture();

/** The requests the fake received other than token calls and uploads. */
const sends = (mock: MockServer) =>
  mock.requests.filter((r) => !r.path.includes('/auth/') && !r.path.includes('/upload/'));
const probes = (mock: MockServer) => mock.deliveries.filter((d) => d.endpoint === 'sendVideo');
const broadcasts = (mock: MockServer) => mock.deliveries.filter((d) => d.target !== 'user');

/** The events of one kind, as they come. */
function collect<E extends OAClientEventName>(client: OAClient, event: E): OAClientEvents[E][] {
  const seen: OAClientEvents[E][] = [];
  client.on(event, (e) => seen.push(e));
  return seen;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

describe('a broadcast of a video not known to be ready', () => {
  it('with a probe user: the video goes to the probe once, then to every recipient', async () => {
    const mock = await fixture.start(CONVERTS_FOREVER);
    const lines: string[] = [];
    const client = fixture.connect(mock, {
      videoProbeUserId: 'probe-user',
      logger: { info: (line) => lines.push(line) },
    });
    const probed = collect(client, 'videoProbe');
    const retries = collect(client, 'retry');
    const { ticket_id } = await client.uploadVideo(clip);
    const broadcast = client.broadcast({
      target: 'selected',
      user_ids: USERS,
      items: [items.text('New clip'), items.video(ticket_id)],
    });
    await endTranscodesOnceWaitedFor(expect, mock);
    const record = await broadcast;
    expect(probes(mock)).toMatchObject([
      { user_ids: ['probe-user'], items: [{ type: 'video', msg: ticket_id }] },
    ]);
    expect(broadcasts(mock)).toEqual([
      expect.objectContaining({ id: record.id, target: 'selected', user_ids: USERS }),
    ]);
    expect(broadcasts(mock)[0]?.failure).toBeUndefined();
    // The probe met the convert status before it was delivered, and the broadcast left only after.
    const paths = sends(mock).map((r) => [r.path.split('/').at(-1), r.status]);
    expect(paths.at(0)).toEqual(['broadcast-video', 400]);
    expect(paths.slice(-2)).toEqual([
      ['broadcast-video', 201],
      ['broadcast-message', 201],
    ]);
    expect(retries.map((r) => r.reason)).toContain('video_converting');
    expect(probed).toEqual([{ ticket_id, user_id: 'probe-user', waitedMs: expect.any(Number) }]);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`video ticket ${ticket_id} is ready: delivered to the probe user probe-user`),
      ),
    );
  });

  it('the probe user may be given per call, on each of the three broadcasts; a confirmed ticket is not probed again', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock);
    const { ticket_id } = await client.uploadVideo(clip);
    const video = [items.video(ticket_id)];
    await client.broadcastToGroup(
      { account_provider_group_id: GROUP, items: video },
      { videoProbeUserId: 'probe-a' },
    );
    await client.broadcastToMemberSession(
      { member_group_broadcast_id: SESSION, items: video },
      { videoProbeUserId: 'probe-b' },
    );
    await client.broadcast({ target: 'all', items: video });
    expect(probes(mock).map((d) => d.user_ids)).toEqual([['probe-a']]);
    expect(broadcasts(mock).map((d) => [d.endpoint, d.failure])).toEqual([
      ['broadcastToGroup', undefined],
      ['broadcastToMemberSession', undefined],
      ['broadcast', undefined],
    ]);
  });

  it('waitForTranscode: false broadcasts at once: the fake runs the job, and it fails', async () => {
    const mock = await fixture.start(CONVERTS_FOREVER);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    const { ticket_id } = await client.uploadVideo(clip);
    const record = await client.broadcast(
      { target: 'selected', user_ids: USERS, items: [items.video(ticket_id)] },
      { waitForTranscode: false },
    );
    expect(probes(mock)).toEqual([]);
    expect(broadcasts(mock)).toEqual([
      expect.objectContaining({ id: record.id, user_ids: USERS, failure: 'Video is in convert status' }),
    ]);
  });

  it('without a probe user, a ticket of this client’s own upload is refused before anything is sent', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock);
    const { ticket_id } = await client.uploadVideo(clip);
    const calls = [
      client.broadcast({ target: 'all', items: [items.text('Hi'), items.video(ticket_id)] }),
      client.broadcastToGroup({ account_provider_group_id: GROUP, items: [items.video(ticket_id)] }),
      client.broadcastToMemberSession({
        member_group_broadcast_id: SESSION,
        items: [items.video(ticket_id)],
      }),
    ];
    for (const call of calls) {
      const error = await rejection(call);
      expect(error).toBeInstanceOf(OAVideoNotConfirmedError);
      expect(error).toBeInstanceOf(OAConfigError);
      expect(error).toMatchObject({ ticket_id, deliveryUnknown: false });
      expect((error as Error).message).toMatch(/videoProbeUserId/);
      expect((error as Error).message).toMatch(/waitForTranscode: false/);
    }
    expect(sends(mock)).toEqual([]);
  });

  it('after a sendVideo success in this process the ticket needs no probe', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock);
    const { ticket_id } = await client.uploadVideo(clip);
    await client.sendVideo({ user_id: 'first-viewer', ticket_id });
    await client.broadcast({ target: 'all', items: [items.video(ticket_id)] });
    expect(mock.deliveries.map((d) => [d.endpoint, d.failure])).toEqual([
      ['sendVideo', undefined],
      ['broadcast', undefined],
    ]);
  });

  it('two broadcasts of one ticket at once share one probe; each ticket of a broadcast is probed once', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    // Two tickets of one clip: each upload goes out (no reuse of the first answer).
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user', reuseUploads: false });
    const first = await client.uploadVideo(clip);
    const second = await client.uploadVideo(clip);
    const both = [items.video(first.ticket_id), items.video(second.ticket_id), items.video(first.ticket_id)];
    await Promise.all([
      client.broadcast({ target: 'all', items: both }),
      client.broadcastToGroup({ account_provider_group_id: GROUP, items: [items.video(first.ticket_id)] }),
    ]);
    expect(
      probes(mock)
        .map((d) => d.items[0]?.msg)
        .sort(),
    ).toEqual([first.ticket_id, second.ticket_id].sort());
    expect(broadcasts(mock)).toHaveLength(2);
    expect(broadcasts(mock).every((d) => d.failure === undefined)).toBe(true);
  });

  it('a probe whose outcome is unknown: the broadcast did not leave, and the error says so', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    const { ticket_id } = await client.uploadVideo(clip);
    mock.injectFault('reset-after-processing', { path: '/webhook/broadcast-video' });
    const error = await rejection(client.broadcast({ target: 'all', items: [items.video(ticket_id)] }));
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error).toMatchObject({ deliveryUnknown: false });
    expect((error as Error).message).toMatch(
      /^Not sent: the probe send of a video failed before the broadcast/,
    );
    expect(((error as Error).cause as { deliveryUnknown: boolean }).deliveryUnknown).toBe(true);
    expect(broadcasts(mock)).toEqual([]);
  });

  it('bad options are refused before anything is sent', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock);
    const params = { target: 'all' as const, items: [items.text('x')] };
    const blank = await rejection(client.broadcast(params, { videoProbeUserId: ' ' }));
    const wait = await rejection(client.broadcast(params, { waitForTranscode: { timeoutMs: -1 } }));
    expect(blank).toBeInstanceOf(OAValidationError);
    expect((blank as Error).message).toMatch(/broadcast options: videoProbeUserId/);
    expect(wait).toBeInstanceOf(OAValidationError);
    expect(() => fixture.connect(mock, { videoProbeUserId: '' })).toThrow(OAConfigError);
    expect(mock.requests).toEqual([]);
  });
});

describe('the wait ends', () => {
  it('a transcode that never finishes: OATranscodeTimeoutError after timeoutMs, nothing broadcast', async () => {
    const mock = await fixture.start(CONVERTS_FOREVER);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    const { ticket_id } = await client.uploadVideo(clip);
    const error = await rejection(
      client.broadcast(
        { target: 'all', items: [items.video(ticket_id)] },
        { waitForTranscode: { timeoutMs: 300 } },
      ),
    );
    expect(error).toBeInstanceOf(OATranscodeTimeoutError);
    expect(error).toMatchObject({ ticket_id });
    expect(mock.deliveries).toEqual([]);
    expect(sends(mock).every((r) => r.path.endsWith('/broadcast-video') && r.status === 400)).toBe(true);
  });

  it('the caller’s signal: OAAbortError, nothing broadcast', async () => {
    const mock = await fixture.start(CONVERTS_FOREVER);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    const { ticket_id } = await client.uploadVideo(clip);
    const controller = new AbortController();
    client.on('retry', () => controller.abort(new Error('the campaign was cancelled')));
    const error = await rejection(
      client.broadcast({ target: 'all', items: [items.video(ticket_id)] }, { signal: controller.signal }),
    );
    expect(error).toBeInstanceOf(OAAbortError);
    expect((error as Error).cause).toEqual(new Error('the campaign was cancelled'));
    expect(mock.deliveries).toEqual([]);
    expect(sends(mock).map((r) => r.path.split('/').at(-1))).toEqual(['broadcast-video']);
  });

  it('close(): the wait ends at once with OAConnectionError, nothing broadcast', async () => {
    const mock = await fixture.start(CONVERTS_FOREVER);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    const { ticket_id } = await client.uploadVideo(clip);
    client.on('retry', () => void client.close());
    const error = await rejection(client.broadcast({ target: 'all', items: [items.video(ticket_id)] }));
    expect(error).toBeInstanceOf(OAConnectionError);
    // Not the refusal of a later request: the wait itself was ended.
    expect((error as Error).message).toMatch(
      /not sent: the client was closed while waiting for the video transcode$/i,
    );
    expect(error).toMatchObject({ deliveryUnknown: false });
    expect(mock.deliveries).toEqual([]);
    expect(sends(mock)).toHaveLength(1);
  });
});

describe('waitForVideo', () => {
  it('probes an unknown ticket once; a ticket known ready resolves without a request', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock);
    const probed = collect(client, 'videoProbe');
    const { ticket_id } = await client.uploadVideo(clip);
    await client.waitForVideo(ticket_id, { probeUserId: 'probe-user' });
    const requests = mock.requests.length;
    await client.waitForVideo(ticket_id);
    await client.broadcast({ target: 'all', items: [items.video(ticket_id)] });
    expect(mock.requests.length).toBe(requests + 1);
    expect(probed).toMatchObject([{ ticket_id, user_id: 'probe-user' }]);
    expect(probes(mock)).toHaveLength(1);
  });

  it('honours timeoutMs and signal, and says how to make it wait when it cannot', async () => {
    const mock = await fixture.start(CONVERTS_FOREVER);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    const { ticket_id } = await client.uploadVideo(clip);
    const timedOut = await rejection(client.waitForVideo(ticket_id, { timeoutMs: 200 }));
    expect(timedOut).toBeInstanceOf(OATranscodeTimeoutError);
    const aborted = await rejection(client.waitForVideo(ticket_id, { signal: AbortSignal.abort() }));
    expect(aborted).toBeInstanceOf(OAAbortError);

    const noProbe = fixture.connect(mock);
    const refused = await rejection(noProbe.waitForVideo(ticket_id));
    expect(refused).toBeInstanceOf(OAVideoNotConfirmedError);
    expect((refused as Error).message).toMatch(/probeUserId/);
    const bad = await rejection(noProbe.waitForVideo('not-a-ticket', { probeUserId: 'p' }));
    expect(bad).toBeInstanceOf(OAValidationError);
    const typo = await rejection(noProbe.waitForVideo(ticket_id, { probeUser: 'p' } as never));
    expect(typo).toBeInstanceOf(OAValidationError);
    expect(mock.deliveries).toEqual([]);
  });

  it('after close() it fails at once', async () => {
    const mock = await fixture.start(CONVERTS_BRIEFLY);
    const client = fixture.connect(mock, { videoProbeUserId: 'probe-user' });
    await client.close();
    const error = await rejection(client.waitForVideo('9f8e7d6c-5b4a-4321-8fed-cba987654321'));
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(mock.requests).toEqual([]);
  });
});
