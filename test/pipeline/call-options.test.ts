import { describe, expect, it } from 'vitest';
import { OAValidationError, type RequestOptions } from '../../src/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const fixture = clientFixture();
const params = { user_id: 'u1', msg: 'x' };

describe('per-call options are checked before any I/O', () => {
  it.each([
    ['signal: "x"', { signal: 'x' }],
    ['options: null', null],
    ['timeoutMs: -1', { timeoutMs: -1 }],
    ['timeoutMs: "x"', { timeoutMs: 'x' }],
  ])('%s: OAValidationError, and no request at all (not even a login)', async (_name, options) => {
    const { client, server } = await fixture.setup(
      tokensThen((_req, res) => json(res, 201, { data: 'success' })),
    );
    const error = await rejectsWithin(client.sendText(params, options as unknown as RequestOptions), 5000);
    expect(error).toBeInstanceOf(OAValidationError);
    expect(server.hits).toEqual([]);
  });
});

it('12 calls sharing one AbortSignal print no MaxListenersExceededWarning', async ({ onTestFinished }) => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  onTestFinished(() => {
    process.off('warning', onWarning);
  });
  const { client } = await fixture.setup(
    // A short delay keeps the twelve calls in flight together.
    tokensThen((_req, res) => {
      setTimeout(() => json(res, 201, { data: 'success' }), 100);
    }),
  );
  await client.generateToken();
  const { signal } = new AbortController();
  const outcome = await settleWithin(
    Promise.all(
      Array.from({ length: 12 }, (_, i) => client.sendText({ user_id: `u${i}`, msg: 'x' }, { signal })),
    ),
    5000,
  );
  expect(outcome.ok).toBe(true);
  // Warnings are emitted on a later tick.
  await new Promise((resolve) => setImmediate(resolve));
  expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map(String)).toEqual([]);
});
