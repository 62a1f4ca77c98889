import { MIN_SECRET_LENGTH } from '../schemas/option-values.js';

/** Keys whose values are credentials, wherever they appear in a body. */
const SECRET_KEYS = /^(api_secret|access_token|refresh_token|authorization)$/i;
const REDACTED = '[redacted]';

/**
 * A credential key and its string value in JSON text, also when the text is cut short inside the
 * value (a truncated token answer): the value runs to its closing quote or to the end of the text.
 */
const SECRET_PAIRS =
  /("(?:api_secret|access_token|refresh_token|authorization)"\s*:\s*")((?:[^"\\]|\\.)*)("?)/gi;
/** A JWT (three base64url parts, the first a JSON header): an access token wherever it appears. */
const JWT = /\beyJ[\w-]{4,}\.[\w-]+\.[\w-]*/g;

/** The forms a secret takes in an answer that echoes it: as is, JSON-escaped (`\/` too), URL-encoded. */
function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, json, json.replaceAll('/', '\\/'), encodeURIComponent(secret)])];
}

/**
 * A text cut short (an error body kept up to its cap) may end inside a secret: that start of it goes
 * too, from 4 characters on.
 */
function withoutCutSecret(text: string, secret: string): string {
  for (let length = Math.min(secret.length - 1, text.length); length >= 4; length--) {
    if (text.endsWith(secret.slice(0, length))) return `${text.slice(0, -length)}${REDACTED}`;
  }
  return text;
}

/**
 * Removes every known secret from a text (in each form an answer may echo it), every credential
 * field's value and every JWT, so that an answer cannot carry a credential into an error message, a
 * log line or `JSON.stringify(err)`: not the key secret, not a token the client holds, not a token
 * the answer itself just issued.
 */
export function redactText(text: string, secrets: Iterable<string | undefined>): string {
  let out = text;
  for (const secret of secrets) {
    // Only a token the server issued can be this short; its credential field is still blanked.
    if (!secret || secret.length < MIN_SECRET_LENGTH) continue;
    for (const form of formsOf(secret)) {
      if (out.includes(form)) out = out.split(form).join(REDACTED);
      out = withoutCutSecret(out, form);
    }
  }
  return out.replace(SECRET_PAIRS, `$1${REDACTED}$3`).replace(JWT, REDACTED);
}

/** A copy of a parsed JSON value with the values of credential keys replaced. */
function redactJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactJson);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = SECRET_KEYS.test(key) && typeof inner === 'string' ? REDACTED : redactJson(inner);
  }
  return out;
}

/** JSON text (already scrubbed of secrets) parsed, with credential fields blanked; else the text. */
export function redactJsonText(clean: string): unknown {
  try {
    return redactJson(JSON.parse(clean));
  } catch {
    return clean;
  }
}
