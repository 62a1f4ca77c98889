/**
 * `oa-messaging`: the client of the OA Public Messaging API ({@link OAClient}), the message item
 * builders ({@link items}), the error classes and the types of every request and answer.
 *
 * @example
 * ```ts
 * import { OAClient, items } from 'oa-messaging';
 * const client = new OAClient(); // OA_BASE_URL, OA_API_KEY, OA_API_SECRET
 * await client.broadcast({ target: 'all', items: [items.text('Spring sale starts today')] });
 * ```
 *
 * @module oa-messaging
 */
export {
  type AccountClientOptions,
  type AccountCredentialsResolver,
  type CreateAccountsOptions,
  createAccounts,
  type OAAccounts,
} from './accounts/accounts.js';
export { OAClient, type SendFileOptions, type SendVideoOptions } from './client.js';
export { MemoryTokenStore, type StoredToken, type TokenStore } from './core/auth.js';
export type { CredentialsProvider, OACredentials } from './core/credentials.js';
export type {
  OAClientEventName,
  OAClientEvents,
  OAClientListener,
  OARateLimitWaitEvent,
  OARequestEvent,
  OAResponseEvent,
  OARetryEvent,
  OATokenRefreshEvent,
  OAVideoProbeEvent,
  RetryReason,
} from './core/events.js';
export type { Logger, LogLevel } from './core/logger.js';
export type {
  AppInfo,
  Coordination,
  OAClientOptions,
  OAMeterProvider,
  OAResponseInfo,
  OATracerProvider,
  ReadyVideos,
  RequestOptions,
  ReuseUploadsOptions,
} from './core/options.js';
export type {
  AcquireOptions,
  Limiter,
  Permit,
  RateLimitBucket,
  RateLimitOptions,
  RateLimits,
  RateLimitWindow,
} from './core/rate-limit.js';
export type { DispatcherLike, DispatchRequest, FetchLike } from './core/transport.js';
export {
  isOAError,
  OAAbortError,
  OAApiError,
  type OAApiErrorDetails,
  OABadRequestError,
  OAConfigError,
  OAConnectionError,
  OACredentialsError,
  OAError,
  type OAErrorOptions,
  type OAFailureKind,
  OAInternalServerError,
  OAJobBusyError,
  OALockLostError,
  OANotFoundError,
  OARateLimitError,
  OAResponseValidationError,
  type OARetryClass,
  OATimeoutError,
  OATranscodeTimeoutError,
  OAUnauthorizedError,
  OAValidationError,
  type OAValidationIssue,
  OAVideoNotConfirmedError,
} from './errors.js';
export { type AudioUpload, items } from './items.js';
export type {
  OAAroundCallHook,
  OAAttemptState,
  OABeforeSendHook,
  OACallState,
  OAHooks,
  OANotDeliveredHook,
  OANotDeliveredState,
} from './schemas/hooks.js';
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
  BroadcastToAllParams,
  BroadcastToGroupParams,
  BroadcastToMemberSessionParams,
  BroadcastToSelectedParams,
  BroadcastToSingleParams,
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
export type {
  FileInput,
  FileSource,
  NodeReadable,
  UploadKind,
  UploadOptions,
  UploadProgress,
} from './uploads/types.js';
export type { UploadAnswers } from './uploads/upload-reuse.js';
export { VERSION } from './version.js';
export { MemoryReadyVideos } from './video/ready-videos.js';
export type { WaitForTranscodeOptions } from './video/transcode.js';
export type { BroadcastOptions, WaitForVideoOptions } from './video/video-ready.js';
