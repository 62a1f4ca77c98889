/** What the client reports (its typed emitter and the events it emits), and the queue's emitter. */
import type { OAError, OARetryClass } from '../errors.js';
import type { Logger } from './logger.js';
import type { RateLimitBucket } from './rate-limit.js';

/**
 * Why a call is being tried again: its failure's retry class (`not_sent`: the request never left;
 * `unauthorized`: 401, the token was renewed and the request is replayed once; `outcome_unknown`: a
 * 5xx, a reset or a timeout on a request that is safe to repeat, auth or uploads), with `rejected`
 * told apart as `rate_limited` (429) and `job_busy` (400 `JOB_BUSY`); and `video_converting` when
 * `sendVideo`'s ticket is still in convert status.
 */
export type RetryReason =
  | Exclude<OARetryClass, 'rejected' | 'final'>
  | 'rate_limited'
  | 'job_busy'
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
  /** The answer's `x-request-id` header, when the server sent one. */
  requestId?: string | undefined;
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

/** What becomes of a listener's error: `name` is the event's. */
export type ListenerErrorReport = (name: string, error: unknown) => void;

/**
 * A small typed emitter, keyed by the event names of `Events`. A listener that throws (or rejects) is
 * reported and never breaks what emitted; an event with no listener costs one lookup.
 */
export class TypedEvents<Events extends object> {
  readonly #listeners = new Map<keyof Events, Set<(event: never) => void>>();
  readonly #heard = new Set<keyof Events>();
  readonly #report: ListenerErrorReport;
  /**
   * The names that have a listener: a hot path reads it (a plain property, no call) and skips
   * building an event nobody reads.
   */
  readonly heard: ReadonlySet<keyof Events> = this.#heard;

  constructor(report: ListenerErrorReport) {
    this.#report = report;
  }

  on<E extends keyof Events>(name: E, listener: (event: Events[E]) => void): void {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as (event: never) => void);
    this.#heard.add(name);
  }

  off<E extends keyof Events>(name: E, listener: (event: Events[E]) => void): void {
    const set = this.#listeners.get(name);
    set?.delete(listener as (event: never) => void);
    if (set?.size === 0) this.#heard.delete(name);
  }

  /** How many listeners there are, over all names. */
  get size(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }

  emit<E extends keyof Events>(name: E, event: Events[E]): void {
    const set = this.#listeners.get(name);
    if (!set || set.size === 0) return;
    for (const listener of set) {
      const report = (error: unknown) => this.#report(String(name), error);
      try {
        const returned: unknown = (listener as (event: Events[E]) => unknown)(event);
        // An async listener's rejection is contained too: it must never become an unhandled rejection.
        if (returned instanceof Promise) returned.catch(report);
      } catch (error) {
        report(error);
      }
    }
  }
}

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
