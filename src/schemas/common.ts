import * as z from 'zod/mini';
import { expecting } from './messages.js';

/**
 * A UUID in its 8-4-4-4-12 hex form, any version. The API documents group, member-session, ticket and
 * audio identifiers as UUIDs; zod's `z.uuid()` would also insist on the RFC variant bits.
 */
export const UuidSchema = z
  .string({ error: expecting('a UUID') })
  .check(
    z.regex(
      /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
      'must be a UUID (8-4-4-4-12 hex digits, as the API gave it)',
    ),
  );

/**
 * A non-empty string that is not only white space. `\S` is exactly what `trim()` keeps (ECMAScript's
 * WhiteSpace and LineTerminator): a zod check rather than a refinement, so that checking a call's
 * params runs no function of the SDK's.
 */
export const NonBlankSchema = z
  .string({ error: expecting('a non-empty string') })
  .check(z.regex(/\S/, 'must not be empty or only white space'));

/** An absolute http(s) URL. */
export const HttpUrlSchema = z.string({ error: expecting('a URL (http or https)') }).check(
  z.refine((s) => {
    try {
      const url = new URL(s);
      return url.protocol === 'https:' || url.protocol === 'http:';
    } catch {
      return false;
    }
  }, 'must be an absolute URL starting with http:// or https://'),
);

/** The spec limits `desc` to 170 characters; counted in Unicode code points so an emoji counts once. */
const DESC_MAX_CHARS = 170;
export const DescSchema = z
  .string({ error: expecting(`a string of at most ${DESC_MAX_CHARS} characters`) })
  .check(
    z.refine(
      (s) => Array.from(s).length <= DESC_MAX_CHARS,
      `must be at most ${DESC_MAX_CHARS} characters (the push notification's short text): shorten it`,
    ),
  );

/** Items per broadcast (endpoints 6, 7, 8). */
export const MAX_ITEMS = 5;
