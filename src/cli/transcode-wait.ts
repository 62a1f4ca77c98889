/** A video send, or a broadcast of videos, with its transcode wait shown on stderr. */
import type { OAClient, OAClientListener } from '../index.js';
import type { Output } from './output.js';
import { transcodeProgress } from './progress.js';

/**
 * Runs `send` (`sendVideo`, `sendVideoFile`, or a broadcast whose videos are probed first), showing each
 * wait while the API still converts the video. The SDK reports those waits as `retry` events with the
 * reason `video_converting`.
 */
export async function showingTranscodeWait<T>(
  client: OAClient,
  out: Output,
  send: () => Promise<T>,
): Promise<T> {
  const view = transcodeProgress('transcode', out.progressStream);
  const onRetry: OAClientListener<'retry'> = (event) => {
    if (event.reason === 'video_converting') {
      view.update({ kind: 'waiting', attempt: event.attempt, waitMs: event.waitMs });
    }
  };
  client.on('retry', onRetry);
  try {
    const result = await send();
    view.update({ kind: 'ready' });
    return result;
  } finally {
    view.stop();
    client.off('retry', onRetry);
  }
}
