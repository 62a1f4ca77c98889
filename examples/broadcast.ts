/**
 * Broadcasts: every item type (text, image, image link, flex, video, audio) to every target (all users,
 * selected users, a single user, a group, a member session).
 *
 *   npx tsx examples/broadcast.ts
 *
 * With your account (OA_BASE_URL, OA_API_KEY, OA_API_SECRET, OA_USER_ID) it only reaches whom you
 * name: OA_USER_ID for `selected` and `single`, OA_GROUP_ID, OA_MEMBER_BROADCAST_ID, and every user
 * only with OA_BROADCAST_ALL=yes. Otherwise it runs against the fake OA server.
 */
import { randomUUID } from 'node:crypto';
import { type BroadcastRecord, isOAError, items, type RetryReason } from 'oa-messaging';
import { connect } from './support/connect.js';

const fixture = (name: string) => new URL(`../test/fixtures/media/${name}`, import.meta.url);

// The fake runs each broadcast job for 0.5 s, as the API runs its jobs: a broadcast made meanwhile
// is answered JOB_BUSY, which the client waits out by itself (see the 'retry' listener below).
const { client, mock, userId, close } = await connect({ fake: { broadcastJobMs: 500 } });

// Whom to reach. On the fake anything goes; with your account, only what you named.
const targets = mock
  ? { all: true, users: [userId, 'user-2'], group: randomUUID(), session: randomUUID() }
  : {
      all: process.env.OA_BROADCAST_ALL === 'yes',
      users: [userId],
      group: process.env.OA_GROUP_ID,
      session: process.env.OA_MEMBER_BROADCAST_ID,
    };

// The client waits these out by itself; the event says so.
const waitingFor: Partial<Record<RetryReason, string>> = {
  job_busy: 'a broadcast job is still running',
  video_converting: 'the video is still converting',
};
client.on('retry', ({ reason, waitMs, endpoint }) => {
  const seconds = (waitMs / 1000).toFixed(1);
  console.log(`  ${endpoint}: ${waitingFor[reason] ?? reason}; trying again in ${seconds} s`);
});

/** One line per broadcast: its record id, the accepted item types, the job's estimated length. */
function show(label: string, record: BroadcastRecord): void {
  const types = record.data.map((item) => item.type).join(', ');
  const minutes = record.estimate_time_detail.total_job_time_minutes;
  const length = minutes < 1 ? `${Number((minutes * 60).toFixed(1))} s` : `${Math.round(minutes)} min`;
  console.log(`${label.padEnd(15)} record ${record.id.slice(0, 8)}  [${types}]  job ~${length}`);
}

try {
  // 1. The media items refer to uploads: an image URL, a video ticket, an audio file's four values.
  const image = await client.uploadImage(fixture('sample.jpg'));
  const { ticket_id } = await client.uploadVideo(fixture('sample.mp4'));
  const audio = await client.uploadAudio(fixture('sample.mp3'));
  console.log(`uploaded an image, a video and ${audio.audio_duration} s of audio`);

  // A broadcast whose video ticket is still converting is accepted, but its job fails later, and the
  // API cannot be asked about a ticket, only sent it. So a broadcast of a ticket not known to be ready
  // first sends the video to a probe user (here OA_USER_ID), waiting while it converts.
  client.on('videoProbe', ({ user_id, waitedMs }) => {
    console.log(
      `video ready: delivered to the probe user ${user_id} after ${(waitedMs / 1000).toFixed(1)} s`,
    );
  });

  // 2. Up to 5 items per broadcast, each built by `items` and validated before anything is sent.
  const sale = items.text('Spring sale: 20% off everything this week.', 'Spring sale'); // desc: the push text
  const banner = items.imageLink(image.url, 'https://shop.example.com/sale');
  const card = items.flex({
    // The layout schema is your OA's; this one is illustrative.
    type: 'bubble',
    body: { type: 'box', layout: 'vertical', contents: [{ type: 'text', text: 'Order #1042 shipped' }] },
  });

  if (targets.all) show('all', await client.broadcast({ target: 'all', items: [sale, banner] }));
  else console.log('all: skipped (set OA_BROADCAST_ALL=yes to message every user)');

  const photo = items.image(image.url);
  const selected = await client.broadcast({
    target: 'selected',
    user_ids: targets.users,
    items: [photo, card],
  });
  show(`selected (${targets.users.length})`, selected);

  const clips = [items.text('Your clip and voice note:'), items.video(ticket_id), items.audio(audio)];
  const single = await client.broadcast(
    { target: 'single', user_ids: [userId], items: clips },
    { videoProbeUserId: userId },
  );
  show('single', single);

  const group = targets.group;
  if (group) {
    const record = await client.broadcastToGroup({ account_provider_group_id: group, items: [sale, card] });
    show('group', record);
  } else console.log('group: skipped (set OA_GROUP_ID)');

  const session = targets.session;
  if (session) {
    const record = await client.broadcastToMemberSession({
      member_group_broadcast_id: session,
      items: [banner, items.audio(audio)],
    });
    show('member session', record);
  } else console.log('member session: skipped (set OA_MEMBER_BROADCAST_ID)');

  if (mock) {
    const broadcasts = mock.deliveries.filter((d) => d.target !== 'user');
    const failed = broadcasts.filter((d) => d.failure);
    console.log(`The fake ran ${broadcasts.length} broadcast jobs, ${failed.length} failed.`);
    if (failed.length > 0) process.exitCode = 1;
  }
} catch (error) {
  console.error(isOAError(error) ? `${error.name}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await close();
}
