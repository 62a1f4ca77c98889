import type { CallControl } from '../core/call-control.js';
import { OABadRequestError, OATranscodeTimeoutError } from '../errors.js';
import type { WaitForTranscodeOptions } from '../schemas/requests.js';

export type { WaitForTranscodeOptions } from '../schemas/requests.js';

/** The longest wait for a ticket in convert status unless told otherwise. */
export const DEFAULT_TRANSCODE_TIMEOUT_MS = 10 * 60_000;
/**
 * The transcode wait polls again after a quarter of the time waited so far, at least 250 ms and at
 * most 10 s: a video is sent at most ~25% later than it became ready (plus one request), in about one
 * poll per 25% more waiting: 16 polls for 10 s, then one each 10 s (6 a minute, of the 200 allowed).
 */
const TRANSCODE_POLL = { minMs: 250, fraction: 0.25, maxMs: 10_000 };

/** How long to wait before the next poll, `waitedMs` into the wait. No jitter: see the caller. */
function transcodePollMs(waitedMs: number): number {
  const { minMs, fraction, maxMs } = TRANSCODE_POLL;
  return Math.min(maxMs, Math.max(minMs, waitedMs * fraction));
}

/** The 400 that `webhook/broadcast-video` answers while the ticket is converting. */
function isVideoConverting(error: unknown): error is OABadRequestError {
  return error instanceof OABadRequestError && /convert/i.test(error.info ?? error.message);
}

/**
 * Runs `send` until the ticket is no longer converting: a 400 "in convert status" is waited out
 * (each try is a new call, so it goes through the rate limiter; {@link transcodePollMs} spaces them),
 * up to `timeoutMs`, then
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
  const started = performance.now();
  const deadline = started + timeoutMs;
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
      // Jitter would only add to the overshoot: the polls of many waits are spread by when each began,
      // and every poll goes through the rate limiter like any call.
      const waitMs = Math.min(left, transcodePollMs(performance.now() - started));
      opts.onWait(Math.round(waitMs), attempt, error);
      await opts.control.sleep(waitMs, 'waiting for the video transcode');
    }
  }
}
