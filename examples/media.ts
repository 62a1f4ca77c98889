/**
 * Media: upload an image, a video and an audio file with progress, send each to a user (waiting out
 * the video's transcode), then the same in one call each.
 *
 *   npx tsx examples/media.ts [image] [video] [audio]
 *
 * Without arguments it sends small files from test/fixtures/media and a tone made in memory. With your
 * account (OA_BASE_URL, OA_API_KEY, OA_API_SECRET, OA_USER_ID) it messages OA_USER_ID; otherwise it
 * runs against the fake OA server.
 */
import { basename } from 'node:path';
import { isOAError } from 'oa-messaging';
import { connect } from './support/connect.js';
import { formatBytes, showProgress } from './support/progress.js';
import { toneWav } from './support/tone.js';

const fixture = (name: string) => new URL(`../test/fixtures/media/${name}`, import.meta.url);
const [imageArg, videoArg, audioArg] = process.argv.slice(2);
// Any file input works: a path, a file: URL, a Buffer, a Blob, a stream, or { data, filename }.
const imageFile = imageArg ?? fixture('sample.png');
const videoFile = videoArg ?? fixture('sample.mp4');
const audioFile = audioArg ?? { data: toneWav(10), filename: 'tone.wav' };
const nameOf = (file: string | URL | { filename: string }) =>
  typeof file === 'object' && 'filename' in file ? file.filename : basename(String(file));
/** Upload progress, labelled with the file's name. */
const progress = (kind: string, file: string | URL | { filename: string }) =>
  showProgress(`  ${kind} ${nameOf(file)}`);

const { client, mock, userId, close } = await connect();

// sendVideo waits while the API answers that the video is still converting; each wait is a 'retry'.
client.on('retry', ({ reason, waitMs, endpoint, attempt }) => {
  const why = reason === 'video_converting' ? 'the video is still converting' : reason;
  console.log(`  ${endpoint}: ${why}; try ${attempt + 1} in ${(waitMs / 1000).toFixed(1)} s`);
});

/** How long since `started`, for the lines below. */
const seconds = (started: number) => `${((performance.now() - started) / 1000).toFixed(1)} s`;

try {
  console.log('1. Upload, then send');
  // onProgress is called as the bytes go out: { loaded, total }.
  const image = await client.uploadImage(imageFile, { onProgress: progress('image', imageFile) });
  console.log(`  -> ${image.src_file}`);
  const video = await client.uploadVideo(videoFile, { onProgress: progress('video', videoFile) });
  console.log(`  -> ticket ${video.ticket_id}, converting`);
  const audio = await client.uploadAudio(audioFile, { onProgress: progress('audio', audioFile) });
  console.log(`  -> ${audio.audio_duration} s, ${formatBytes(audio.audio_size)}, uuid ${audio.audio_uuid}`);

  console.log(`  sendImage: ${await client.sendImage({ user_id: userId, image_url: image.url })}`);
  // sendVideo waits for the transcode, trying again after a quarter of the time waited so far (250 ms
  // at first, at most 10 s), for up to 10 minutes (`{ waitForTranscode: { timeoutMs } }` changes that; `false` fails at once).
  let started = performance.now();
  const sent = await client.sendVideo({ user_id: userId, ticket_id: video.ticket_id });
  console.log(`  sendVideo: ${sent} after ${seconds(started)}`);
  // The four values of the upload go to sendAudio (or items.audio) unchanged.
  const { audio_url, audio_uuid, audio_size, audio_duration } = audio;
  const params = { user_id: userId, audio_url, audio_uuid, audio_size, audio_duration };
  console.log(`  sendAudio: ${await client.sendAudio(params)}`);

  console.log('2. One call each: upload, (wait,) send');
  const link = 'https://shop.example.com/new'; // tapping the image opens it
  console.log(`  sendImageFile: ${await client.sendImageFile(userId, fixture('sample.jpg'), { link })}`);
  started = performance.now();
  const clip = fixture('sample.webm');
  const sentFile = await client.sendVideoFile(userId, clip, { onProgress: progress('video', clip) });
  console.log(`  sendVideoFile: ${sentFile} after ${seconds(started)}`);
  console.log(`  sendAudioFile: ${await client.sendAudioFile(userId, fixture('sample.mp3'))}`);

  if (mock) {
    const { uploads, deliveries } = mock;
    console.log(`The fake stored ${uploads.length} files and delivered ${deliveries.length} messages:`);
    console.log(`  ${deliveries.map((d) => d.items[0]?.type).join(', ')}`);
  }
} catch (error) {
  // An upload is checked (format from the bytes, size) before anything is sent: OAValidationError.
  console.error(isOAError(error) ? `${error.name}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await close();
}
