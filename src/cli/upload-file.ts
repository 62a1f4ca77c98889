/**
 * Uploads with their progress drawn on stderr: `oa upload`, and the `--file` sends, which go through the
 * SDK's one-call helpers.
 */
import { basename } from 'node:path';
import type {
  OAClient,
  SendFileOptions,
  SendResult,
  UploadAudioResult,
  UploadImageResult,
  UploadKind,
  UploadVideoResult,
} from '../index.js';
import { AfterUploadError } from './errors.js';
import type { Output } from './output.js';
import { uploadProgress } from './progress.js';

/** What each kind of upload answers. */
export interface UploadResults {
  image: UploadImageResult;
  video: UploadVideoResult;
  audio: UploadAudioResult;
}

/** Uploads the file at `path` as `kind`, showing its progress; the display ends before this returns. */
export async function uploadWithProgress<K extends UploadKind>(
  client: OAClient,
  kind: K,
  path: string,
  out: Output,
): Promise<UploadResults[K]> {
  const view = uploadProgress(`upload ${basename(path)}`, out.progressStream);
  const options = { onProgress: view.update };
  try {
    switch (kind) {
      case 'image':
        return (await client.uploadImage(path, options)) as UploadResults[K];
      case 'video':
        return (await client.uploadVideo(path, options)) as UploadResults[K];
      default:
        return (await client.uploadAudio(path, options)) as UploadResults[K];
    }
  } finally {
    view.stop();
  }
}

/**
 * A `--file` send: `send` calls one of the SDK's one-call helpers (which checks every argument before
 * the upload) with these progress and upload callbacks. The upload's display ends once the file is
 * stored, before the send. A failure after the upload carries the upload's answer, so that the stored
 * file can be sent without uploading it again.
 */
export async function sendFileWithProgress<U>(
  path: string,
  out: Output,
  send: (options: SendFileOptions<U>) => Promise<SendResult>,
): Promise<{ upload: U; result: SendResult }> {
  const view = uploadProgress(`upload ${basename(path)}`, out.progressStream);
  let upload: U | undefined;
  try {
    const result = await send({
      onProgress: view.update,
      onUploaded: (value) => {
        upload = value;
        view.stop();
      },
    });
    // The helper tells the upload before it sends, so it is known here.
    return { upload: upload as U, result };
  } catch (error) {
    throw upload === undefined ? error : new AfterUploadError(upload, error);
  } finally {
    view.stop();
  }
}
