/** What the fake records of each request: its record as it arrives, and how it ended. */
import { type Answer, answerError } from './answers.js';
import type { RecordedRequest } from './types.js';

/** A request's record as it arrives: in flight (`pending`) until {@link settle} ends it. */
export function newRecord(
  method: string,
  url: URL,
  headers: Record<string, string>,
  size: number,
  at: number,
): RecordedRequest {
  return {
    method: method.toUpperCase(),
    path: url.pathname,
    query: url.search,
    headers,
    body: undefined,
    size,
    status: undefined,
    outcome: 'pending',
    at,
  };
}

/**
 * Ends a record: answered, or reset (with the answer that would have been sent, if there was one);
 * the code of an error answer, and how long since `startedAt` (`performance.now()`), go with it.
 */
export function settle(
  record: RecordedRequest,
  outcome: 'answered' | 'reset',
  startedAt: number,
  answer?: Answer,
): void {
  record.outcome = outcome;
  if (answer) {
    record.status = answer.status;
    const { code, info } = answerError(answer);
    if (code !== undefined) record.code = code;
    if (info !== undefined) record.info = info;
  }
  record.durationMs = Math.round(performance.now() - startedAt);
}
