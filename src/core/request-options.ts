/** Per-call options, the last argument of every method. Every property also accepts `undefined`. */
export interface RequestOptions {
  /**
   * Cancels the call wherever it is (the rate limiter's queue, the token, a backoff, the transcode
   * wait, the request itself); the call rejects with `OAAbortError`.
   */
  signal?: AbortSignal | undefined;
  /**
   * The call's deadline in ms (1 to 2^31-1): it bounds everything the call waits for (the rate
   * limiter's queue, a login or refresh, Redis round trips, backoffs) and each attempt. Past it the
   * call rejects with `OATimeoutError`; `deliveryUnknown` says whether a send may have gone out.
   * @default none: each attempt is bounded by the client's `timeoutMs`, and a call waits its turn in
   * the rate limiter however long the queue
   */
  timeoutMs?: number | undefined;
  /**
   * This call's own retry budget, in place of the client's `maxRetries` (0: no retry). Retries that
   * wait on 429 and `JOB_BUSY` do not use it up.
   * @default the client's `maxRetries`
   */
  maxRetries?: number | undefined;
  /**
   * Called with the answer that settled the call, before the call resolves: its status, headers and
   * `x-request-id`, for your logs or a support ticket. An error answer carries them on the error
   * (`OAApiError.requestId`) instead.
   * @example await client.sendText(params, { onResponse: (r) => log.info('sent', { id: r.requestId }) })
   */
  onResponse?: ((response: OAResponseInfo) => void) | undefined;
}

/** The answer that settled a call, as `onResponse` receives it. */
export interface OAResponseInfo {
  /** The HTTP status, a 2xx. */
  status: number;
  /** The answer's headers, names in lower case. */
  headers: Record<string, string | string[] | undefined>;
  /** The `x-request-id` header, when the server sent one. */
  requestId: string | undefined;
  /** Which attempt of the call this was: 1, then 2 after a retry... */
  attempt: number;
}

/**
 * A per-call hook, under this symbol in the options, run once per attempt just before the request
 * leaves (after the rate-limit slot and the token): a durable queue records there that the send may
 * have gone out. Not part of the public options; `Symbol.for` so that every bundle of the package
 * shares it. A hook that throws keeps the request from leaving (the call fails as not sent).
 */
export const BEFORE_SEND: unique symbol = Symbol.for('oa-messaging.beforeSend') as never;

/** The hook of {@link BEFORE_SEND}, if the options carry one. */
export function beforeSendOf(options: object | undefined): (() => unknown) | undefined {
  const hook = (options as Record<symbol, unknown> | undefined)?.[BEFORE_SEND];
  return typeof hook === 'function' ? (hook as () => unknown) : undefined;
}

/**
 * The other half of {@link BEFORE_SEND}: a per-call hook, under this symbol in the options, run when an
 * attempt whose request left ended certainly without delivering (an answer that says the API did not
 * act: 429, `JOB_BUSY`, a 4xx such as a video still converting, a 401; or a failure classed not sent),
 * before the call waits to try again or rejects. Not run when the attempt succeeded or may have been
 * acted on. Not part of the public options; a hook that fails changes nothing of the call.
 */
export const NOT_DELIVERED: unique symbol = Symbol.for('oa-messaging.notDelivered') as never;

/** The hook of {@link NOT_DELIVERED}, if the options carry one. */
export function notDeliveredOf(options: object | undefined): (() => unknown) | undefined {
  const hook = (options as Record<symbol, unknown> | undefined)?.[NOT_DELIVERED];
  return typeof hook === 'function' ? (hook as () => unknown) : undefined;
}
