import type { z } from 'zod';

/** An endpoint, declared: what it is called, what it takes, what it answers, and how it may be repeated. */
export interface Endpoint<P extends z.ZodType, R extends z.ZodType> {
  path: string;
  params: P;
  response: R;
  /** Sends `Authorization: Bearer`; endpoints 1 and 2 do not. */
  auth: boolean;
  /** A send or broadcast: at most once (see "Retries" in API.md). */
  isSend: boolean;
  /** Named in validation messages, e.g. `sendText params`. */
  name: string;
}

/** The rate-limit bucket of a path: uploads count in their own window as well as the general one. */
export function bucketOf(path: string): 'general' | 'upload' {
  return path.includes('/upload/') ? 'upload' : 'general';
}
