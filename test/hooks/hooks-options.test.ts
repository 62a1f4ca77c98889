/**
 * `hooks` as an option: checked before anything is sent, on the client (`OAConfigError`) and per call
 * (`OAValidationError`, like every call option); and around a `sendVideo` that waits for its ticket,
 * one logical call.
 */
import { expect, it } from 'vitest';
import {
  OAClient,
  OAConfigError,
  type OAHooks,
  OAValidationError,
  type RequestOptions,
} from '../../src/index.js';
import { API, clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends, hits } = clientFixture();

const creds = { baseUrl: 'https://oa.example.com', apiKey: 'key-123456', apiSecret: 'secret-abcdef' };

const RULE = 'hooks must be { aroundCall?, beforeSend?, notDelivered? }: arrays of functions';

it.each([
  ['a hook that is not a function', { beforeSend: [() => {}, 'record'] }],
  ['a single function, not an array', { notDelivered: () => {} }],
  ['a misspelt hook', { beforeRequest: [() => {}] }],
  ['an array', [() => {}]],
  ['null', null],
])('the client refuses %s with OAConfigError', (_name, hooks) => {
  expect(() => new OAClient({ ...creds, hooks: hooks as OAHooks })).toThrow(OAConfigError);
  expect(() => new OAClient({ ...creds, hooks: hooks as OAHooks })).toThrow(RULE);
});

it('the client takes empty lists, undefined ones and none', () => {
  expect(() => new OAClient({ ...creds, hooks: { aroundCall: [], beforeSend: undefined } })).not.toThrow();
  expect(() => new OAClient({ ...creds, hooks: {} })).not.toThrow();
});

it('a call with a hook that is not a function: OAValidationError, and no request at all (not even a login)', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  const options = { hooks: { beforeSend: [42] } } as unknown as RequestOptions;
  const error = await rejection(client.sendText({ user_id: 'u1', msg: 'hi' }, options));
  expect(error).toBeInstanceOf(OAValidationError);
  expect(error.message).toContain(`sendText options: ${RULE.replace('hooks ', 'hooks: ')}`);
  const broadcast = await rejection(
    client.broadcast({ target: 'all', items: [{ type: 'message', msg: 'hi' }] }, options),
  );
  expect(broadcast).toBeInstanceOf(OAValidationError);
  expect(hits('/auth/token')).toBe(0);
  expect(sends()).toHaveLength(0);
});

it('sendVideo waiting for its ticket: aroundCall once around every try, beforeSend before each', async () => {
  let tries = 0;
  const converting = {
    statusCode: 400,
    data: { statusCode: 400, code: 'BAD_REQUEST', info: 'Video is in convert status' },
    path: `${API}/webhook/broadcast-video`,
  };
  const { client } = await setup(
    tokensThen((_req, res) =>
      ++tries <= 2 ? json(res, 400, converting) : json(res, 201, { data: 'success' }),
    ),
  );
  const seen: string[] = [];
  const hooks: OAHooks = {
    aroundCall: [
      async (state, next) => {
        seen.push(`around> ${state.endpoint}`);
        const result = await next();
        seen.push(`around< ${state.endpoint}`);
        return result;
      },
    ],
    beforeSend: [(state) => void seen.push(`before#${state.attempt}`)],
    notDelivered: [(state) => void seen.push(`notDelivered ${state.error.name}`)],
  };
  const ticket_id = '6f1c2a4e-9b7d-4c3e-8a1f-2d5e7b9c0a13';
  await expect(client.sendVideo({ user_id: 'u1', ticket_id }, { hooks })).resolves.toBe('success');
  expect(seen).toEqual([
    'around> sendVideo',
    'before#1',
    'notDelivered OABadRequestError',
    'before#1',
    'notDelivered OABadRequestError',
    'before#1',
    'around< sendVideo',
  ]);
  expect(sends()).toHaveLength(3);
});
