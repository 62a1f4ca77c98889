/** An unsigned JWT with the given claims: enough for the client, which only reads `iat` and `exp`. */
export function makeJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

/** A token pair whose access token lives `lifetimeSeconds` from now; `n` makes each pair distinct. */
export function tokenPair(n: number, lifetimeSeconds = 3600) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    access_token: makeJwt({ sub: 'provider-1', n, iat, exp: iat + lifetimeSeconds }),
    refresh_token: `refresh-token-${n}-abcdef`,
    token_type: 'Bearer',
    expires_in: '1h',
  };
}
