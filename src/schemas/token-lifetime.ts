/**
 * What a token answer says of its access token's lifetime: the JWT's `exp - iat`, the `expires_in`
 * field, or the documented hour. Read where the answer is parsed and where the pair is kept.
 */

/** The documented `expires_in` (spec "Token pair"): filled in when an answer gives nothing usable. */
const DOCUMENTED_EXPIRES_IN = '1h';

/** The documented lifetime of an access token, in ms. */
export const DOCUMENTED_LIFETIME_MS = 60 * 60 * 1000;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `'1h'`, `'30m'`, `'3600s'`, `'3600'` or `3600` (seconds) to milliseconds; else `undefined`. */
export function parseExpiresIn(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value > 0 ? value * 1000 : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  if (!match) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[(match[2] ?? 's').toLowerCase()] ?? 1000);
  return ms > 0 ? ms : undefined;
}

/** base64url text as UTF-8, with no Buffer (edge runtimes have none); throws on bad input. */
function decodeBase64Url(text: string): string {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (char) => char.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/** The `iat` and `exp` claims of a JWT, when it decodes. The signature is the server's business. */
function decodeJwtTimes(token: string): { iat?: number; exp?: number } {
  const payload = token.split('.')[1];
  if (!payload) return {};
  try {
    const claims: unknown = JSON.parse(decodeBase64Url(payload));
    if (typeof claims !== 'object' || claims === null) return {};
    const { iat, exp } = claims as Record<string, unknown>;
    return {
      ...(typeof iat === 'number' ? { iat } : {}),
      ...(typeof exp === 'number' ? { exp } : {}),
    };
  } catch {
    return {};
  }
}

/**
 * `exp - iat` of a JWT access token, in seconds, when it has both and `exp` is later. A difference of
 * the server's own two times: never compared with this machine's clock, which may differ.
 */
export function jwtLifetimeSeconds(accessToken: string): number | undefined {
  const { iat, exp } = decodeJwtTimes(accessToken);
  return exp !== undefined && iat !== undefined && exp > iat ? exp - iat : undefined;
}

/**
 * The `expires_in` a pair is handed over with: the answer's own when it states a lifetime, else the
 * JWT's `exp - iat` in seconds, else the documented `'1h'`.
 */
export function filledExpiresIn(accessToken: string, answered: unknown): string | number {
  if (
    (typeof answered === 'string' || typeof answered === 'number') &&
    parseExpiresIn(answered) !== undefined
  ) {
    return answered;
  }
  return jwtLifetimeSeconds(accessToken) ?? DOCUMENTED_EXPIRES_IN;
}
