/** Keeping secrets off the web inbox: what the timeline shows of a request body or query. */

/** Field names whose values are never shown: the api secret (and key), tokens, credentials. */
const SECRET_FIELD = /secret|token|password|authorization|api_?key|credential/i;
/** A JWT anywhere in a string (the fake's access tokens are HS256 JWTs). */
const JWT = /eyJ[\w-]+\.[\w-]+\.[\w-]*/g;
const HIDDEN = '[hidden]';

/** A copy of `value` with the values of secret-looking fields, and any JWT, replaced. */
export function redact(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(JWT, HIDDEN);
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => [key, SECRET_FIELD.test(key) ? HIDDEN : redact(v)]),
    );
  }
  return value;
}

/** A query string with the values of secret-looking parameters replaced. */
export function redactQuery(query: string): string {
  if (query === '') return '';
  const params = new URLSearchParams(query);
  for (const [key] of params) if (SECRET_FIELD.test(key)) params.set(key, HIDDEN);
  return `?${params.toString().replace(JWT, HIDDEN)}`;
}

/**
 * The last guard before anything is sent to the page: every occurrence of a known secret in the text,
 * whatever put it there (a secret typed into a message, say), is replaced.
 */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text.replace(JWT, HIDDEN);
  for (const secret of secrets) {
    // A very short secret would blank out ordinary words; the fake's own is long enough.
    if (secret.length >= 6) out = out.split(secret).join(HIDDEN);
  }
  return out;
}
