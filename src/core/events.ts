import type { OAError } from '../errors.js';
import { TypedEvents } from './emitter.js';
import type { Logger } from './logger.js';
import type { RateLimitBucket } from './rate-limit.js';

/** Why a call is being tried again. */
export type RetryReason =
  /** 429: the API's rate limit. */
  | 'rate_limited'
  /** 400 `JOB_BUSY`: a broadcast job is running. */
  | 'job_busy'
  /** The request never left: the connection was refused or not found, or a shared limiter or token
   * store (oa-messaging/redis) could not be reached. */
  | 'not_sent'
  /** 401: the access token was renewed and the request is replayed once. */
  | 'unauthorized'
  /** A 5xx, a reset or a timeout on a request that is safe to repeat (auth, uploads). */
  | 'outcome_unknown'
  /** `sendVideo`: the ticket is still in convert status. */
  | 'video_converting';

/** What every request event names: the method, its endpoint path and the attempt. */
export interface OARequestEvent {
  /** The client method, e.g. `sendText`. */
  endpoint: string;
  /** Always `POST` in this API. */
  method: 'POST';
  /** The endpoint path, e.g. `/api/v2/public/webhook/broadcast-message`. */
  path: string;
  /** 1 for the first attempt, 2 after one retry... */
  attempt: number;
}

/** An answer that came back. */
export interface OAResponseEvent extends OARequestEvent {
  /** Its HTTP status. */
  status: number;
  /** From sending to the last byte of the answer, in ms. */
  durationMs: number;
}

/** A failed attempt that will be tried again. */
export interface OARetryEvent {
  /** The client method, e.g. `sendText`. */
  endpoint: string;
  /** The endpoint path. */
  path: string;
  /** The attempt that failed. */
  attempt: number;
  /** Why it is tried again. */
  reason: RetryReason;
  /** How long the client waits first, in ms. */
  waitMs: number;
  /** What failed. */
  error: OAError;
}

/** A request that waited in the client's rate limiter. */
export interface OARateLimitWaitEvent {
  /** The client method. */
  endpoint: string;
  /** The endpoint path. */
  path: string;
  /** Which limit it waited for. */
  bucket: RateLimitBucket;
  /** How long, in ms. */
  waitedMs: number;
}

/** A video ticket confirmed through the probe user. */
export interface OAVideoProbeEvent {
  /** The video ticket. */
  ticket_id: string;
  /** The probe user who received it. */
  user_id: string;
  /** From the first probe send to the delivery, in ms. */
  waitedMs: number;
}

/** A new access token. */
export interface OATokenRefreshEvent {
  /** `login` with the key and secret, or `refresh` with the refresh token. */
  kind: 'login' | 'refresh';
  /** There was no token, it was close to expiry, or the API refused it. */
  reason: 'no_token' | 'expiring' | 'rejected';
}

/** What the client reports, by event name. Events never carry a secret. */
export interface OAClientEvents {
  /** A request is leaving (one per attempt). */
  request: OARequestEvent;
  /** An answer came back (any status). */
  response: OAResponseEvent;
  /** A failed attempt will be tried again after `waitMs`. */
  retry: OARetryEvent;
  /** A request waited in the client's rate limiter before leaving. */
  rateLimitWait: OARateLimitWaitEvent;
  /**
   * A video ticket not known to be ready was confirmed by delivering it to the probe user, before a
   * broadcast or in `waitForVideo`; `waitedMs` counts from the first probe send to the delivery.
   */
  videoProbe: OAVideoProbeEvent;
  /** The client obtained (`login`) or refreshed (`refresh`) its access token. */
  tokenRefresh: OATokenRefreshEvent;
}

/** The name of an event of {@link OAClientEvents}. */
export type OAClientEventName = keyof OAClientEvents;
/** A listener of event `E`. */
export type OAClientListener<E extends OAClientEventName> = (event: OAClientEvents[E]) => void;

/** The client's emitter: one {@link TypedEvents} over {@link OAClientEvents}, reporting to its logger. */
export class ClientEvents extends TypedEvents<OAClientEvents> {
  constructor(logger: Logger) {
    super((name, error) =>
      logger.error?.(`oa-messaging: a '${name}' listener threw`, {
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  }
}
