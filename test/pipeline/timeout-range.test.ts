import { describe, expect, it } from 'vitest';
import { OAClient, OAConfigError, OAValidationError } from '../../src/index.js';
import { rejectsWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const fixture = clientFixture();
const delivered = tokensThen((_req, res) => json(res, 201, { data: 'success' }));

/** Node turns a timer delay above 2^31-1 ms into 1 ms: such a value must be refused, not obeyed. */
const MAX_TIMER_MS = 2 ** 31 - 1;

describe('timeoutMs beyond what a timer holds', () => {
  it.each([2 ** 31, Number.POSITIVE_INFINITY])(
    'a per-call timeoutMs of %d is refused before anything is sent',
    async (timeoutMs) => {
      const { client, server } = await fixture.setup(delivered);
      const error = await rejectsWithin(client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs }), 5000);
      expect(error).toBeInstanceOf(OAValidationError);
      expect(server.hits).toEqual([]);
    },
  );

  it.each(['timeoutMs', 'uploadTimeoutMs'] as const)('the client option %s: 3e9 is refused', (name) => {
    expect(
      () =>
        new OAClient({
          baseUrl: 'http://127.0.0.1:9',
          apiKey: 'key-123456',
          apiSecret: 'secret-abcdef',
          [name]: 3e9,
        }),
    ).toThrow(OAConfigError);
  });

  it('2^31-1 is accepted, per call and as client options', async () => {
    const { client, server } = await fixture.setup(delivered, {
      timeoutMs: MAX_TIMER_MS,
      uploadTimeoutMs: MAX_TIMER_MS,
    });
    const outcome = client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: MAX_TIMER_MS });
    await expect(outcome).resolves.toBe('success');
    expect(server.hits.filter((h) => h.path.endsWith('/webhook/broadcast-message'))).toHaveLength(1);
  });
});
