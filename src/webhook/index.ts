/**
 * `oa-messaging/webhook`: receive the messages clients send to an OA account. The OA service posts each
 * one to the account's `webhook_url` as `{ event_type, username, data, timestamp }`, where `data` is a
 * Tencent Cloud Chat (IM) message callback.
 *
 * The OA API does not sign these requests; see {@link createWebhookHandler} for how to protect a receiver.
 *
 * @module oa-messaging/webhook
 */
export type { Logger } from '../core/logger.js';
export { OAValidationError, type OAValidationIssue } from '../errors.js';
export type {
  GetMessageMediaOptions,
  ImageFormatName,
  ImageVariant,
  WebhookAudioMedia,
  WebhookFileMedia,
  WebhookImageMedia,
  WebhookImageRendition,
  WebhookMedia,
  WebhookVideoMedia,
} from './content.js';
export { getMessageMedia, getMessageText } from './content.js';
export {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_MAX_BODY_BYTES,
  type WaitUntil,
  type WebhookAccounts,
  type WebhookCloseOptions,
  type WebhookEventContext,
  type WebhookHandlerClose,
  type WebhookHandlerOptions,
} from './core.js';
export {
  MemoryDedupeStore,
  type WebhookDedupeOptions,
  type WebhookDedupeState,
  type WebhookDedupeStore,
} from './dedupe.js';
export {
  type CustomElem,
  CustomElemSchema,
  type FaceElem,
  FaceElemSchema,
  type FileElem,
  FileElemSchema,
  type ImageElem,
  ImageElemSchema,
  type ImageInfo,
  isKnownMsgBodyElement,
  type KnownMsgBodyElement,
  KnownMsgBodyElementSchema,
  type KnownMsgType,
  type LocationElem,
  LocationElemSchema,
  type MsgBodyElement,
  MsgBodyElementSchema,
  type RelayElem,
  RelayElemSchema,
  type SoundElem,
  SoundElemSchema,
  type TextElem,
  TextElemSchema,
  type UnknownMsgBodyElement,
  type VideoFileElem,
  VideoFileElemSchema,
} from './element-schemas.js';
export {
  createFetchWebhookHandler,
  type FetchWebhookHandler,
  type WebhookPlatformContext,
} from './fetch-handler.js';
export { createWebhookHandler, type NodeWebhookHandler } from './node-handler.js';
export { type ParseWebhookEventOptions, parseWebhookEvent } from './parse.js';
export {
  isMessageEvent,
  type OfflinePushInfo,
  OfflinePushInfoSchema,
  type TIMMessageCallback,
  TIMMessageCallbackSchema,
  type WebhookEvent,
  type WebhookEventExtras,
  type WebhookMessageEvent,
  WebhookMessageEventSchema,
  type WebhookUnknownEvent,
} from './schemas.js';
