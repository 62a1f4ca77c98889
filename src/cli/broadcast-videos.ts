/**
 * The videos of `oa broadcast`: files given to `--video` are uploaded first (their progress shown), then
 * the SDK confirms every ticket through the probe user before the broadcast leaves, its transcode wait
 * shown as `oa send video` shows it. A broadcast of a video still converting would be accepted, and its
 * job would fail: the API cannot be asked whether a video is ready, only sent it.
 */
import { existsSync } from 'node:fs';
import { basename } from 'node:path';
import type { BroadcastOptions, BroadcastRecord, MessageItem, OAClient, OAClientListener } from '../index.js';
import { AfterUploadError, UsageError } from './errors.js';
import type { Output } from './output.js';
import { showingTranscodeWait } from './transcode-wait.js';
import { uploadWithProgress } from './upload-file.js';

/** The flags of the wait. */
export interface VideoWaitFlags {
  probeUser?: string;
  /** `false` with `--no-wait`. */
  wait: boolean;
  waitTimeout?: number;
}

const TICKET_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A `--video` value is a file to upload, unless it is shaped like a ticket_id and no such file exists. */
export function isVideoFile(value: string): boolean {
  return !TICKET_ID.test(value) || existsSync(value);
}

/**
 * Refuses, before any upload, a broadcast that would have to wait for a video without a way to: this
 * process knows no ticket to be ready, so every video needs the probe user (or `--no-wait`).
 */
export function checkVideoWait(items: readonly { type: string }[], flags: VideoWaitFlags): void {
  if (!flags.wait || flags.probeUser !== undefined) return;
  if (!items.some((item) => item.type === 'video')) return;
  throw new UsageError(
    'a video item needs --probe-user USER_ID: a user of yours who receives the video first, once ' +
      'converted, so that the broadcast does not go out while it still converts (its job would fail). ' +
      'Or --no-wait to broadcast at once.',
  );
}

/** The SDK options of the wait. */
function broadcastOptions(flags: VideoWaitFlags): BroadcastOptions {
  if (!flags.wait) return { waitForTranscode: false };
  return {
    ...(flags.probeUser === undefined ? {} : { videoProbeUserId: flags.probeUser }),
    waitForTranscode: flags.waitTimeout === undefined ? {} : { timeoutMs: flags.waitTimeout },
  };
}

/**
 * Uploads the video files among `items` (`files`: item -> path), puts their ticket_ids in, and runs
 * `send` with the wait's options, showing the wait and the probe's delivery. A failure after an upload
 * carries the ticket_ids, so that the broadcast can be made again without uploading again.
 */
export async function broadcastWithVideos(
  client: OAClient,
  out: Output,
  items: MessageItem[],
  files: ReadonlyMap<object, string>,
  flags: VideoWaitFlags,
  send: (options: BroadcastOptions) => Promise<BroadcastRecord>,
): Promise<BroadcastRecord> {
  const ticket_ids: string[] = [];
  for (const item of items) {
    const path = files.get(item);
    if (item.type !== 'video' || path === undefined) continue;
    const { ticket_id } = await uploadWithProgress(client, 'video', path, out);
    out.notice(`uploaded ${basename(path)}: ticket_id ${ticket_id}`);
    item.msg = ticket_id;
    ticket_ids.push(ticket_id);
  }
  const onProbe: OAClientListener<'videoProbe'> = (event) => {
    out.notice(`video ${event.ticket_id} delivered to the probe user ${event.user_id}: it is ready`);
  };
  client.on('videoProbe', onProbe);
  try {
    return await showingTranscodeWait(client, out, () => send(broadcastOptions(flags)));
  } catch (error) {
    if (ticket_ids.length === 0) throw error;
    throw new AfterUploadError(
      ticket_ids.length === 1 ? { ticket_id: ticket_ids[0] } : { ticket_ids },
      error,
    );
  } finally {
    client.off('videoProbe', onProbe);
  }
}
