/** HS256 JSON Web Tokens with node:crypto: what the fake issues as access tokens. */
import { createHmac, timingSafeEqual } from 'node:crypto';

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const HEADER = encode({ alg: 'HS256', typ: 'JWT' });

const signature = (input: string, secret: Uint8Array) =>
  createHmac('sha256', secret).update(input).digest('base64url');

/** Signs `claims` with HS256. */
export function signJwt(claims: Record<string, unknown>, secret: Uint8Array): string {
  const input = `${HEADER}.${encode(claims)}`;
  return `${input}.${signature(input, secret)}`;
}

/** The claims of a token signed with `secret`, or a reason it is refused (bad form or signature, expired). */
export function verifyJwt(
  token: string,
  secret: Uint8Array,
  nowMs: number,
): { claims: Record<string, unknown> } | { refused: string } {
  const [header, payload, sig, ...rest] = token.split('.');
  if (!header || !payload || !sig || rest.length > 0) return { refused: 'Invalid token' };
  const expected = Buffer.from(signature(`${header}.${payload}`, secret));
  const given = Buffer.from(sig);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) {
    return { refused: 'Invalid token' };
  }
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { refused: 'Invalid token' };
  }
  if (typeof claims !== 'object' || claims === null) return { refused: 'Invalid token' };
  const { exp } = claims as { exp?: unknown };
  if (typeof exp !== 'number' || nowMs >= exp * 1000) return { refused: 'Token expired' };
  return { claims: claims as Record<string, unknown> };
}

/** The claims of a token, NOT verified: only to tell which issuer should verify it. */
export function unverifiedClaims(token: string): Record<string, unknown> | undefined {
  try {
    const claims: unknown = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** `expires_in` text for a lifetime, in the style of the `ms` package (`1h`, `15m`, `30s`, `500ms`). */
export function lifetimeText(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1_000, 's'],
  ];
  for (const [size, unit] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms)}ms`;
}
