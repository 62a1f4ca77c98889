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
}
