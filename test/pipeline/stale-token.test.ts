import { describe, expect, it } from 'vitest';
import { settleWithin } from '../helpers/bounded.js';
import { API, clientFixture } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';
import { makeJwt } from '../helpers/tokens.js';

const { setup, hits } = clientFixture();

const now = () => Math.floor(Date.now() / 1000);

/** Claims of access tokens that look stale on arrival, though `expires_in` says they live an hour. */
const CLAIMS: [string, () => Record<string, number>][] = [
  ['exp in the past (the server clock is an hour behind)', () => ({ iat: now() - 7200, exp: now() - 3600 })],
  ['exp in the past and no iat', () => ({ exp: now() - 3600 })],
  ['exp equal to iat', () => ({ iat: now(), exp: now() })],
  ['exp before iat', () => ({ iat: now(), exp: now() - 60 })],
];

describe.each(CLAIMS)('a token with %s', (_name, claims) => {
  it('is renewed at most once over 20 sends', async () => {
    let n = 0;
    const { client } = await setup((req, res) => {
      if (req.url?.startsWith(`${API}/auth/`)) {
        n++;
        return json(res, 201, {
          data: {
            access_token: makeJwt({ sub: 'provider-1', n, ...claims() }),
            refresh_token: `refresh-token-${n}-abcdef`,
            token_type: 'Bearer',
            expires_in: '1h',
          },
        });
      }
      json(res, 201, { data: 'success' });
    });
    for (let i = 0; i < 20; i++) {
      const sent = await settleWithin(client.sendText({ user_id: 'u1', msg: `m${i}` }), 5000, `send ${i}`);
      expect(sent).toMatchObject({ ok: true, value: 'success' });
    }
    expect(hits('/auth/token') + hits('/auth/refresh-token')).toBeLessThanOrEqual(2);
  });
});
