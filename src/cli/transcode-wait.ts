/** `sendVideo` with its transcode wait shown on stderr. */
import type { OAClient, OAClientListener, SendResult, SendVideoOptions } from '../index.js';
import type { Output } from './output.js';
import { transcodeProgress } from './progress.js';

/**
 * Sends a video, showing each wait while the API still converts it. The SDK reports those waits as
 * `retry` events with the reason `video_converting`.
 */
export async function sendVideoShowingWait(
  client: OAClient,
  params: { user_id: string; ticket_id: string },
  options: SendVideoOptions,
  out: Output,
): Promise<SendResult> {
  const view = transcodeProgress('transcode', out.progressStream);
  const onRetry: OAClientListener<'retry'> = (event) => {
    if (event.reason === 'video_converting') {
      view.update({ kind: 'waiting', attempt: event.attempt, waitMs: event.waitMs });
    }
  };
  client.on('retry', onRetry);
  try {
    const result = await client.sendVideo(params, options);
    view.update({ kind: 'ready' });
    return result;
  } finally {
    view.stop();
    client.off('retry', onRetry);
  }
}
