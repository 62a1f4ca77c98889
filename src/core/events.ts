import type { OAError } from '../errors.js';
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

/** What the client reports, by event name. Events never carry a secret. */
export interface OAClientEvents {
  /** A request is leaving (one per attempt). */
  request: { endpoint: string; method: 'POST'; path: string; attempt: number };
  /** An answer came back (any status). */
  response: {
    endpoint: string;
    method: 'POST';
    path: string;
    attempt: number;
    status: number;
    durationMs: number;
  };
  /** A failed attempt will be tried again after `waitMs`. */
  retry: {
    endpoint: string;
    path: string;
    attempt: number;
    reason: RetryReason;
    waitMs: number;
    error: OAError;
  };
  /** A request waited in the client's rate limiter before leaving. */
  rateLimitWait: { endpoint: string; path: string; bucket: RateLimitBucket; waitedMs: number };
  /**
   * A video ticket not known to be ready was confirmed by delivering it to the probe user, before a
   * broadcast or in `waitForVideo`; `waitedMs` counts from the first probe send to the delivery.
   */
  videoProbe: { ticket_id: string; user_id: string; waitedMs: number };
  /** The client obtained (`login`) or refreshed (`refresh`) its access token. */
  tokenRefresh: { kind: 'login' | 'refresh'; reason: 'no_token' | 'expiring' | 'rejected' };
}

export type OAClientEventName = keyof OAClientEvents;
export type OAClientListener<E extends OAClientEventName> = (event: OAClientEvents[E]) => void;

/**
 * A small typed emitter. A listener that throws is reported to the logger and never breaks a call; an
 * event with no listener costs one lookup.
 */
export class ClientEvents {
  readonly #listeners = new Map<OAClientEventName, Set<(event: never) => void>>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  on<E extends OAClientEventName>(name: E, listener: OAClientListener<E>): void {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener as (event: never) => void);
  }

  off<E extends OAClientEventName>(name: E, listener: OAClientListener<E>): void {
    this.#listeners.get(name)?.delete(listener as (event: never) => void);
  }

  /** Whether `name` has a listener: a hot path skips building an event nobody reads. */
  has(name: OAClientEventName): boolean {
    return (this.#listeners.get(name)?.size ?? 0) > 0;
  }

  emit<E extends OAClientEventName>(name: E, event: OAClientEvents[E]): void {
    const set = this.#listeners.get(name);
    if (!set || set.size === 0) return;
    for (const listener of set) {
      const report = (error: unknown) =>
        this.#logger.error?.(`oa-messaging: a '${name}' listener threw`, {
          error: error instanceof Error ? error.message : String(error),
        });
      try {
        const returned: unknown = (listener as OAClientListener<E>)(event);
        // An async listener's rejection is contained too: it must never become an unhandled rejection.
        if (returned instanceof Promise) returned.catch(report);
      } catch (error) {
        report(error);
      }
    }
  }
}
