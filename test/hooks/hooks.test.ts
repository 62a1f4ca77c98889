/**
 * The public seam around a call (`hooks`, on the client and per call), driven against a node:http
 * server: what the hooks are told, in which order, and what their failures do to the call.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ServerResponse } from 'node:http';
import { expect, it } from 'vitest';
import {
  type OAAttemptState,
  type OACallState,
  OAConnectionError,
  type OAHooks,
  OAJobBusyError,
  type OANotDeliveredState,
  OARateLimitError,
  OATimeoutError,
  OAUnauthorizedError,
} from '../../src/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { API, clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';
import { tokenPair } from '../helpers/tokens.js';

const { setup, sends, hits } = clientFixture();

const SEND_TEXT = `${API}/webhook/broadcast-message`;
const errorBody = (status: number, code: string, info: string) => ({
  statusCode: status,
  data: { statusCode: status, code, info },
  path: SEND_TEXT,
});

/** Hooks that note, under `name`, each state they are told (and how many sends had arrived by then). */
function noting(name: string, seen: string[], states: OACallState[]): OAHooks {
  const note = (what: string, state: OACallState) => {
    states.push(state);
    seen.push(`${name} ${what} ${state.endpoint}${state.renewal ? ' (renewal)' : ''}`);
  };
  return {
    aroundCall: [
      async (state, next) => {
        note('around>', state);
        try {
          return await next();
        } finally {
          note('around<', state);
        }
      },
    ],
    beforeSend: [(state: OAAttemptState) => note(`before#${state.attempt}@${sends().length}`, state)],
    notDelivered: [
      (state: OANotDeliveredState) => note(`notDelivered#${state.attempt} ${state.error.name}`, state),
    ],
  };
}

it('per attempt, with a 429 then a success: the client hooks first, then the call own; the renewal told apart', async () => {
  let n = 0;
  const seen: string[] = [];
  const states: OACallState[] = [];
  const { client } = await setup(
    tokensThen((_req, res) =>
      ++n === 1
        ? json(res, 429, { statusCode: 429, data: 'Too many' }, { 'retry-after-ms': '100' })
        : json(res, 201, { data: 'success' }),
    ),
    { hooks: noting('client', seen, states) },
  );
  client.on('retry', (e) => seen.push(`retry ${e.reason}`));
  const params = { user_id: 'u1', msg: 'hi' };
  await expect(client.sendText(params, { hooks: noting('call', seen, states) })).resolves.toBe('success');
  expect(seen).toEqual([
    'client around> sendText',
    'call around> sendText',
    // The login of the first call: the client's hooks only.
    'client around> generateToken (renewal)',
    'client before#1@0 generateToken (renewal)',
    'client around< generateToken (renewal)',
    'client before#1@0 sendText',
    'call before#1@0 sendText',
    'client notDelivered#1 OARateLimitError sendText',
    'call notDelivered#1 OARateLimitError sendText',
    'retry rate_limited',
    'client before#2@1 sendText',
    'call before#2@1 sendText',
    'call around< sendText',
    'client around< sendText',
  ]);
  const send = states.find((s) => s.endpoint === 'sendText') as OACallState;
  expect(send).toMatchObject({ endpoint: 'sendText', method: 'POST', path: SEND_TEXT });
  expect(send.params).toEqual(params);
  expect(send.renewal).toBe(false);
  // Nothing secret in any of them: not the api secret, not the token, not the login's params.
  const login = states.find((s) => s.renewal) as OACallState;
  expect(login).toMatchObject({ endpoint: 'generateToken', path: `${API}/auth/token`, params: undefined });
  const told = JSON.stringify(states);
  expect(told).not.toContain('secret-abcdef');
  expect(told).not.toMatch(/eyJ|refresh-token/);
});

it('notDelivered after a 429, a JOB_BUSY and a 401, with the failure; not after a reset once the request left', async () => {
  const answers = [
    (res: ServerResponse) =>
      json(res, 429, { statusCode: 429, data: 'Too many' }, { 'retry-after-ms': '100' }),
    (res: ServerResponse) => json(res, 400, errorBody(400, 'JOB_BUSY', 'A broadcast job is running')),
    (res: ServerResponse) => json(res, 401, errorBody(401, 'UNAUTHORIZED', 'Unauthorized')),
    (res: ServerResponse) => json(res, 201, { data: 'success' }),
    // The request was read (acted on), then the connection is cut before any answer.
    (res: ServerResponse) => res.socket?.destroy(),
  ];
  let n = 0;
  let pairs = 0;
  // A new pair at each login or refresh: the replay after the 401 carries another token.
  const { client } = await setup((req, res) =>
    req.url?.startsWith(`${API}/auth/`) ? json(res, 201, { data: tokenPair(++pairs) }) : answers[n++]?.(res),
  );
  const told: OANotDeliveredState[] = [];
  const hooks: OAHooks = { notDelivered: [(state) => void told.push(state)] };
  await expect(client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks })).resolves.toBe('success');
  expect(told.map((s) => [s.attempt, s.error.constructor])).toEqual([
    [1, OARateLimitError],
    [2, OAJobBusyError],
    [3, OAUnauthorizedError],
  ]);
  expect(told.every((s) => s.endpoint === 'sendText' && s.params !== undefined)).toBe(true);
  told.length = 0;
  const error = await rejection(client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks }));
  expect(error).toBeInstanceOf(OAConnectionError);
  expect(error.deliveryUnknown).toBe(true);
  expect(told).toEqual([]);
  expect(sends()).toHaveLength(5);
});

it('a beforeSend that throws: nothing sent, OAConnectionError not sent whose cause is the hook error', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  const refused = new Error('no record store');
  const error = await rejection(
    client.sendText(
      { user_id: 'u1', msg: 'hi' },
      {
        maxRetries: 0,
        hooks: {
          beforeSend: [
            () => {
              throw refused;
            },
          ],
        },
      },
    ),
  );
  expect(error).toBeInstanceOf(OAConnectionError);
  expect(error.cause).toBe(refused);
  expect(error.deliveryUnknown).toBe(false);
  expect(error.message).toMatch(/not sent: its beforeSend hook failed: no record store/);
  expect(sends()).toHaveLength(0);
});

it("a client's beforeSend that hangs is bounded by the call's timeoutMs; nothing is sent", async () => {
  const { client } = await setup(
    tokensThen((_req, res) => json(res, 201, { data: 'success' })),
    {
      // The login goes; the call's own request waits on the hook for ever.
      hooks: { beforeSend: [(state) => (state.renewal ? undefined : new Promise(() => {}))] },
    },
  );
  const outcome = await settleWithin(
    client.sendText({ user_id: 'u1', msg: 'hi' }, { timeoutMs: 300 }),
    3000,
    'a call whose beforeSend hook hangs',
  );
  expect(outcome.ok).toBe(false);
  const error = (outcome as { error: OATimeoutError }).error;
  expect(error).toBeInstanceOf(OATimeoutError);
  expect(error.deliveryUnknown).toBe(false);
  expect(error.message).toMatch(/while running its beforeSend hook/);
  expect(hits('/auth/token')).toBe(1);
  expect(sends()).toHaveLength(0);
});

it('aroundCall: the call runs inside it (its async context reaches the per-attempt hooks), once', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  const active = new AsyncLocalStorage<string>();
  const inside: (string | undefined)[] = [];
  const hooks: OAHooks = {
    aroundCall: [
      (state, next) => active.run(`span of ${state.endpoint}`, next),
      // Its own value is ignored, and a second next() sends nothing more: the call settles as next() did.
      async (_state, next) => {
        const first = await next();
        await expect(next()).rejects.toThrow(/not sent: its aroundCall hook failed: next\(\) called twice/);
        return { replaced: first };
      },
    ],
    beforeSend: [() => void inside.push(active.getStore())],
  };
  await expect(client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks })).resolves.toBe('success');
  expect(inside).toEqual(['span of sendText']);
  expect(sends()).toHaveLength(1);
});

it('aroundCall that fails before next(), or returns without calling it: the call fails, nothing is sent', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  const refused = new Error('circuit open');
  const failing = await rejection(
    client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks: { aroundCall: [() => Promise.reject(refused)] } }),
  );
  expect(failing).toBeInstanceOf(OAConnectionError);
  expect(failing.cause).toBe(refused);
  expect(failing.deliveryUnknown).toBe(false);
  const skipped = await rejection(
    client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks: { aroundCall: [async () => 'fake'] } }),
  );
  expect(skipped).toBeInstanceOf(OAConnectionError);
  expect(skipped.message).toMatch(/not sent: its aroundCall hook failed: next\(\) not called/);
  expect(sends()).toHaveLength(0);
});
