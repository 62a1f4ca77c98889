/** Keys whose values are credentials, wherever they appear in a body. */
const SECRET_KEYS = /^(api_secret|access_token|refresh_token|authorization)$/i;
export const REDACTED = '[redacted]';

/**
 * Removes every known secret from a text, so an answer that echoes a credential cannot carry it into
 * an error message, a log line or `JSON.stringify(err)`.
 */
export function redactText(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    // Very short values would blank out ordinary words; real keys and tokens are long.
    if (secret && secret.length >= 6) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** A copy of a parsed JSON value with the values of credential keys replaced. */
export function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = SECRET_KEYS.test(key) && typeof inner === 'string' ? REDACTED : redactJson(inner);
  }
  return out;
}
