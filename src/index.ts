export { OAClient, type SendFileOptions, type SendVideoOptions } from './client.js';
export type { Coordination } from './core/coordination.js';
export type { DispatcherLike, DispatchRequest } from './core/dispatcher.js';
export type {
  OAClientEventName,
  OAClientEvents,
  OAClientListener,
  RetryReason,
} from './core/events.js';
export type { AppInfo } from './core/headers.js';
export type { Logger, LogLevel } from './core/logger.js';
export type { OAClientOptions } from './core/options.js';
export type {
  AcquireOptions,
  Limiter,
  Permit,
  RateLimitBucket,
  RateLimitOptions,
  RateLimitWindow,
} from './core/rate-limit.js';
export { MemoryReadyVideos, type ReadyVideos } from './core/ready-videos.js';
export type { OAResponseInfo, RequestOptions } from './core/request-options.js';
export { MemoryTokenStore, type StoredToken, type TokenStore } from './core/token-store.js';
export type { WaitForTranscodeOptions } from './core/transcode.js';
export type { BroadcastOptions, WaitForVideoOptions } from './core/video-ready.js';
export {
  isOAError,
  OAAbortError,
  OAApiError,
  type OAApiErrorDetails,
  OABadRequestError,
  OAConfigError,
  OAConnectionError,
  OAError,
  type OAErrorOptions,
  OAInternalServerError,
  OAJobBusyError,
  OANotFoundError,
  OARateLimitError,
  OAResponseValidationError,
  OATimeoutError,
  OATranscodeTimeoutError,
  OAUnauthorizedError,
  OAValidationError,
  type OAValidationIssue,
  OAVideoNotConfirmedError,
} from './errors.js';
export { type AudioUpload, items } from './items.js';
export {
  type AudioItem,
  AudioItemSchema,
  type FlexItem,
  FlexItemSchema,
  type ImageItem,
  ImageItemSchema,
  type ImageLinkItem,
  ImageLinkItemSchema,
  type MessageItem,
  MessageItemSchema,
  type MessageItemType,
  type TextItem,
  TextItemSchema,
  type VideoItem,
  VideoItemSchema,
} from './schemas/items.js';
export type {
  BroadcastParams,
  BroadcastTarget,
  BroadcastToGroupParams,
  BroadcastToMemberSessionParams,
  SendAudioParams,
  SendGreetingParams,
  SendImageParams,
  SendTextParams,
  SendVideoParams,
} from './schemas/requests.js';
export type {
  AcceptedItem,
  BroadcastRecord,
  Greeting,
  SendResult,
  TokenPair,
  UploadAudioResult,
  UploadImageResult,
  UploadVideoResult,
} from './schemas/responses.js';
export type { FileInput, FileSource, UploadKind, UploadOptions, UploadProgress } from './uploads/types.js';
export { VERSION } from './version.js';
