import type { AudioItem, FlexItem, ImageItem, ImageLinkItem, TextItem, VideoItem } from './schemas/items.js';
import type { UploadAudioResult } from './schemas/responses.js';

/** The audio values that `uploadAudio` returns and an `audio` item carries. */
export type AudioUpload = Pick<
  UploadAudioResult,
  'audio_url' | 'audio_uuid' | 'audio_size' | 'audio_duration'
>;

/**
 * Builders for the message items of `broadcast`, `broadcastToGroup` and `broadcastToMemberSession`.
 * They only shape the item; every item is validated when the broadcast is called.
 */
export const items = {
  /** `{ type: 'message', msg, desc? }`: plain text; `desc` is at most 170 characters. */
  text(msg: string, desc?: string): TextItem {
    return desc === undefined ? { type: 'message', msg } : { type: 'message', msg, desc };
  },
  /** `{ type: 'image', msg: url }`: a plain image, e.g. the `url` of `uploadImage`. */
  image(url: string): ImageItem {
    return { type: 'image', msg: url };
  },
  /** `{ type: 'oa_image_link', msg: url, link }`: an image that opens `link` when tapped. */
  imageLink(url: string, link: string): ImageLinkItem {
    return { type: 'oa_image_link', msg: url, link };
  },
  /** `{ type: 'flex', msg: JSON.stringify(layout) }`; a string is taken as already serialised. */
  flex(layout: string | object): FlexItem {
    return { type: 'flex', msg: typeof layout === 'string' ? layout : JSON.stringify(layout) };
  },
  /** `{ type: 'video', msg: ticket_id }`, with the `ticket_id` of `uploadVideo`. */
  video(ticket_id: string): VideoItem {
    return { type: 'video', msg: ticket_id };
  },
  /** `{ type: 'audio', msg: audio_url, audio_uuid, audio_size, audio_duration }` from `uploadAudio`. */
  audio(upload: AudioUpload): AudioItem {
    return {
      type: 'audio',
      msg: upload.audio_url,
      audio_uuid: upload.audio_uuid,
      audio_size: upload.audio_size,
      audio_duration: upload.audio_duration,
    };
  },
} as const;
