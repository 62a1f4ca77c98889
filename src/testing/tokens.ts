/** The fake's token pairs (spec "Authentication"): HS256 access tokens and opaque refresh tokens. */
import { randomBytes, randomUUID } from 'node:crypto';
import { lifetimeText, signJwt, verifyJwt } from './jwt.js';

/** A token pair as endpoints 1 and 2 answer it. */
export interface FakeTokenPair {
  /** The bearer token (a JWT). */
  access_token: string;
  /** The refresh token. */
  refresh_token: string;
  /** `Bearer`. */
  token_type: 'Bearer';
  /** The access token's lifetime, e.g. `1h`. */
  expires_in: string;
}

/** Settings of a {@link TokenIssuer}. */
export interface TokenIssuerOptions {
  apiKey: string;
  /** The account's username, the tokens' `sub`. */
  username: string;
  lifetimeMs: number;
  refreshLifetimeMs: number;
  rotateRefreshTokens: boolean;
}

/** The token of a `Bearer` authorization header, if it has one. */
export function bearerToken(authorization: string | undefined): string | undefined {
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
}

/** Issues, checks, refreshes and revokes tokens; the clock is passed in. */
export class TokenIssuer {
  readonly #options: TokenIssuerOptions;
  #signingKey: Uint8Array = randomBytes(32);
  /** Refresh token -> when it expires. */
  #refreshTokens = new Map<string, number>();
  /** `jti` of the access tokens issued since the last {@link expireAccessTokens}. */
  #liveAccessIds = new Set<string>();
  /** `jti` of the access tokens made to expire early. */
  #expiredAccessIds = new Set<string>();

  constructor(options: TokenIssuerOptions) {
    this.#options = options;
  }

  /** A new pair. */
  issue(now: number): FakeTokenPair {
    const { lifetimeMs, refreshLifetimeMs, apiKey, username } = this.#options;
    // Whole seconds as jsonwebtoken issues them; a lifetime under a second keeps its milliseconds.
    const iat = lifetimeMs % 1000 === 0 ? Math.floor(now / 1000) : now / 1000;
    const claims = { sub: username, api_key: apiKey, typ: 'access', jti: randomUUID(), iat };
    this.#liveAccessIds.add(claims.jti);
    const access_token = signJwt({ ...claims, exp: iat + lifetimeMs / 1000 }, this.#signingKey);
    const refresh_token = randomBytes(32).toString('base64url');
    this.#refreshTokens.set(refresh_token, now + refreshLifetimeMs);
    return { access_token, refresh_token, token_type: 'Bearer', expires_in: lifetimeText(lifetimeMs) };
  }

  /** Why an `Authorization` header is refused, or `undefined` when its bearer token is valid. */
  refusal(authorization: string | undefined, now: number): string | undefined {
    const token = bearerToken(authorization);
    if (!token) return 'Missing bearer token';
    const result = verifyJwt(token, this.#signingKey, now);
    if ('refused' in result) return result.refused;
    if (this.#expiredAccessIds.has(String(result.claims.jti))) return 'Token expired';
    return result.claims.typ === 'access' ? undefined : 'Invalid token';
  }

  /** Whether this issuer gave out `refresh_token` (valid or not any more, until a revoke). */
  issued(refresh_token: string): boolean {
    return this.#refreshTokens.has(refresh_token);
  }

  /** A new pair for a valid refresh token (which then stops working, if they rotate), else `undefined`. */
  refresh(refresh_token: string, now: number): FakeTokenPair | undefined {
    const expiresAt = this.#refreshTokens.get(refresh_token);
    if (expiresAt === undefined || now >= expiresAt) {
      this.#refreshTokens.delete(refresh_token);
      return undefined;
    }
    const pair = this.issue(now);
    if (this.#options.rotateRefreshTokens) {
      this.#refreshTokens.delete(refresh_token);
    } else {
      this.#refreshTokens.delete(pair.refresh_token);
      pair.refresh_token = refresh_token;
    }
    return pair;
  }

  /** Every access token issued so far is refused as expired; refresh tokens keep working. */
  expireAccessTokens(): void {
    for (const id of this.#liveAccessIds) this.#expiredAccessIds.add(id);
    this.#liveAccessIds.clear();
  }

  /** Every token issued so far stops working. */
  revoke(): void {
    this.#liveAccessIds.clear();
    this.#expiredAccessIds.clear();
    this.#signingKey = randomBytes(32);
    this.#refreshTokens.clear();
  }
}
