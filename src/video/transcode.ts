import type { CallControl } from '../core/call-control.js';
import { backoffMs } from '../core/retry.js';
import { OABadRequestError, OATranscodeTimeoutError } from '../errors.js';

/** How long `sendVideo` waits for a ticket still in convert status. */
export interface WaitForTranscodeOptions {
  /** @default 600_000 (10 minutes) */
  timeoutMs?: number | undefined;
}

/** The longest wait for a ticket in convert status unless told otherwise. */
export const DEFAULT_TRANSCODE_TIMEOUT_MS = 10 * 60_000;
/** About 1 s at first, growing to 10 s. */
const POLL_BACKOFF = { initialMs: 1_000, maxMs: 10_000 };

/** The 400 that `webhook/broadcast-video` answers while the ticket is converting. */
function isVideoConverting(error: unknown): error is OABadRequestError {
  return error instanceof OABadRequestError && /convert/i.test(error.info ?? error.message);
}

/**
 * Runs `send` until the ticket is no longer converting: a 400 "in convert status" is waited out
 * (each try is a new call, so it goes through the rate limiter), up to `timeoutMs`, then
 * `OATranscodeTimeoutError`. With `wait: false` the first 400 is the answer.
 */
export async function untilTranscoded<T>(
  send: () => Promise<T>,
  opts: {
    ticket_id: string;
    wait: WaitForTranscodeOptions | false | undefined;
    /** Ends the wait on the caller's signal and the client's `close()`. */
    control: CallControl;
    onWait: (waitMs: number, attempt: number, error: OABadRequestError) => void;
  },
): Promise<T> {
  if (opts.wait === false) return send();
  const timeoutMs = opts.wait?.timeoutMs ?? DEFAULT_TRANSCODE_TIMEOUT_MS;
  const deadline = performance.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (error) {
      if (!isVideoConverting(error)) throw error;
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new OATranscodeTimeoutError(
          `Video ticket ${opts.ticket_id} was still converting after ${Math.round(timeoutMs / 1000)} s`,
          opts.ticket_id,
          { cause: error },
        );
      }
      const waitMs = Math.min(left, backoffMs(attempt, POLL_BACKOFF));
      opts.onWait(Math.round(waitMs), attempt, error);
      await opts.control.sleep(waitMs, 'waiting for the video transcode');
    }
  }
}
