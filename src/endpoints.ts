import type * as z from 'zod/mini';
import { allDistinct } from '#endpoints-runtime';
import * as req from './schemas/requests.js';
import * as res from './schemas/responses.js';
import type { UploadKind } from './uploads/types.js';

/** An endpoint, declared: what it is called, what it takes, what it answers, and how it may be repeated. */
export interface Endpoint<P extends z.ZodMiniType, R extends z.ZodMiniType> {
  path: string;
  params: P;
  response: R;
  /** Sends `Authorization: Bearer`; endpoints 1 and 2 do not. */
  auth: boolean;
  /** A send or broadcast: at most once (see "Retries" in API.md). */
  isSend: boolean;
  /** The rate-limit bucket: uploads count in their own window as well as the general one. */
  bucket: 'general' | 'upload';
  /** Named in validation messages, e.g. `sendText params`. */
  name: string;
}

/** The API's path prefix (spec: `{base_url}/api/v2/public/...`). */
const API = '/api/v2/public';

/** The JSON endpoints of the spec, declared: the path, what goes in, what comes out, how it may repeat. */
export const endpoints = {
  generateToken: {
    name: 'generateToken',
    path: `${API}/auth/token`,
    params: req.GenerateTokenParamsSchema,
    response: res.TokenPairSchema,
    auth: false,
    isSend: false,
    bucket: 'general',
  },
  refreshToken: {
    name: 'refreshToken',
    path: `${API}/auth/refresh-token`,
    params: req.RefreshTokenParamsSchema,
    response: res.TokenPairSchema,
    auth: false,
    isSend: false,
    bucket: 'general',
  },
  sendGreeting: {
    name: 'sendGreeting',
    path: `${API}/webhook/broadcast-greeting`,
    params: req.SendGreetingParamsSchema,
    response: res.GreetingSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  sendImage: {
    name: 'sendImage',
    path: `${API}/webhook/broadcast-image-link`,
    params: req.SendImageParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  sendText: {
    name: 'sendText',
    path: `${API}/webhook/broadcast-message`,
    params: req.SendTextParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  broadcast: {
    name: 'broadcast',
    path: `${API}/message/broadcast-message`,
    // The repeat check of `user_ids` is the runtime's: the schemas import nothing of the runtime.
    params: req.broadcastParamsSchema(allDistinct),
    response: res.BroadcastRecordSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  broadcastToGroup: {
    name: 'broadcastToGroup',
    path: `${API}/message/broadcast-group-message`,
    params: req.BroadcastToGroupParamsSchema,
    response: res.BroadcastRecordSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  broadcastToMemberSession: {
    name: 'broadcastToMemberSession',
    path: `${API}/message/broadcast-member-session`,
    params: req.BroadcastToMemberSessionParamsSchema,
    response: res.BroadcastRecordSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  sendVideo: {
    name: 'sendVideo',
    path: `${API}/webhook/broadcast-video`,
    params: req.SendVideoParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
  sendAudio: {
    name: 'sendAudio',
    path: `${API}/webhook/broadcast-audio`,
    params: req.SendAudioParamsSchema,
    response: res.SuccessSchema,
    auth: true,
    isSend: true,
    bucket: 'general',
  },
} as const;

/** The multipart endpoints: no effect a user would see twice, so they are retried like auth. */
export const uploads = {
  image: {
    name: 'uploadImage',
    path: `${API}/upload/image`,
    params: req.UploadParamsSchema,
    response: res.UploadImageResultSchema,
    auth: true,
    isSend: false,
    bucket: 'upload',
  },
  video: {
    name: 'uploadVideo',
    path: `${API}/upload/video`,
    params: req.UploadParamsSchema,
    response: res.UploadVideoResultSchema,
    auth: true,
    isSend: false,
    bucket: 'upload',
  },
  audio: {
    name: 'uploadAudio',
    path: `${API}/upload/audio`,
    params: req.UploadParamsSchema,
    response: res.UploadAudioResultSchema,
    auth: true,
    isSend: false,
    bucket: 'upload',
  },
} as const satisfies Record<UploadKind, Endpoint<z.ZodMiniType, z.ZodMiniType>>;
