/** An upload with its progress drawn on stderr, shared by `oa upload` and the `--file` sends. */
import { basename } from 'node:path';
import type {
  OAClient,
  UploadAudioResult,
  UploadImageResult,
  UploadKind,
  UploadVideoResult,
} from '../index.js';
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
