import { z } from 'zod';

/**
 * A UUID in its 8-4-4-4-12 hex form, any version. The API documents group, member-session, ticket and
 * audio identifiers as UUIDs; zod's `z.uuid()` would also insist on the RFC variant bits.
 */
export const UuidSchema = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, 'Expected a UUID');

/**
 * A non-empty string that is not only white space. `\S` is exactly what `trim()` keeps (ECMAScript's
 * WhiteSpace and LineTerminator): a zod check rather than a refinement, so that checking a call's
 * params runs no function of the SDK's.
 */
export const NonBlankSchema = z.string().regex(/\S/, 'Must not be empty');

/** An absolute http(s) URL. */
export const HttpUrlSchema = z.string().refine((s) => {
  try {
    const url = new URL(s);
    return url.protocol === 'https:' || url.protocol === 'http:';
  } catch {
    return false;
  }
}, 'Expected an absolute http(s) URL');

/** The spec limits `desc` to 170 characters; counted in Unicode code points so an emoji counts once. */
const DESC_MAX_CHARS = 170;
export const DescSchema = z
  .string()
  .refine((s) => Array.from(s).length <= DESC_MAX_CHARS, `Must be at most ${DESC_MAX_CHARS} characters`);

/** Items per broadcast (endpoints 6, 7, 8). */
export const MAX_ITEMS = 5;
