/**
 * The one-call helpers (`sendImageFile`, `sendAudioFile`, `sendVideoFile`): an upload, then the send
 * that uses it. Every argument is checked before the upload: a mistake found after it would leave a
 * stored file and nothing sent.
 */

import type { RequestOptions } from '../core/options.js';
import type { SendFileOptions, SendVideoOptions, UploadOptions } from '../schemas/requests.js';
import * as req from '../schemas/requests.js';
import type * as res from '../schemas/responses.js';
import { validate } from '../schemas/validate.js';
import { discardInput } from '../uploads/source.js';
import type { FileInput } from '../uploads/types.js';

export type { SendFileOptions, SendVideoOptions } from '../schemas/requests.js';

/** What the helpers need of the client: its public upload and send methods. */
export interface FileSender {
  uploadImage(file: FileInput, options?: UploadOptions): Promise<res.UploadImageResult>;
  uploadAudio(file: FileInput, options?: UploadOptions): Promise<res.UploadAudioResult>;
  uploadVideo(file: FileInput, options?: UploadOptions): Promise<res.UploadVideoResult>;
  sendImage(params: req.SendImageParams, options?: RequestOptions): Promise<res.SendResult>;
  sendAudio(params: req.SendAudioParams, options?: RequestOptions): Promise<res.SendResult>;
  sendVideo(params: req.SendVideoParams, options?: SendVideoOptions): Promise<res.SendResult>;
}

function check(
  name: string,
  file: FileInput,
  params: { user_id: string; link?: string | undefined },
  options: object,
) {
  try {
    validate(req.SendFileParamsSchema, params, `${name} params`);
    validate(req.SendFileOptionsSchema, options, `${name} options`);
  } catch (error) {
    discardInput(file);
    throw error;
  }
}

/** The request options of a one-call helper, for its second request. */
function requestOnly(options: RequestOptions): RequestOptions {
  return { signal: options.signal, timeoutMs: options.timeoutMs };
}

export async function sendImageFile(
  client: FileSender,
  user_id: string,
  file: FileInput,
  options: SendFileOptions<res.UploadImageResult> & { link?: string | undefined } = {},
): Promise<res.SendResult> {
  check('sendImageFile', file, { user_id, link: options?.link }, options);
  const { link, onUploaded, ...uploadOptions } = options;
  const image = await client.uploadImage(file, uploadOptions);
  onUploaded?.(image);
  return client.sendImage(
    { user_id, image_url: image.url, ...(link === undefined ? {} : { link }) },
    requestOnly(options),
  );
}

export async function sendAudioFile(
  client: FileSender,
  user_id: string,
  file: FileInput,
  options: SendFileOptions<res.UploadAudioResult> = {},
): Promise<res.SendResult> {
  check('sendAudioFile', file, { user_id }, options);
  const { onUploaded, ...uploadOptions } = options;
  const audio = await client.uploadAudio(file, uploadOptions);
  onUploaded?.(audio);
  const { audio_url, audio_uuid, audio_size, audio_duration } = audio;
  return client.sendAudio(
    { user_id, audio_url, audio_uuid, audio_size, audio_duration },
    requestOnly(options),
  );
}

export async function sendVideoFile(
  client: FileSender,
  user_id: string,
  file: FileInput,
  options: SendFileOptions<res.UploadVideoResult> & Pick<SendVideoOptions, 'waitForTranscode'> = {},
): Promise<res.SendResult> {
  check('sendVideoFile', file, { user_id }, options);
  const { waitForTranscode, onUploaded, ...uploadOptions } = options;
  const video = await client.uploadVideo(file, uploadOptions);
  onUploaded?.(video);
  return client.sendVideo(
    { user_id, ticket_id: video.ticket_id },
    { ...requestOnly(options), ...(waitForTranscode === undefined ? {} : { waitForTranscode }) },
  );
}
