import { Agent } from 'undici';
import { afterEach, expect, it } from 'vitest';
import { type OAClient, OAConnectionError, type RequestOptions } from '../../src/index.js';
import { clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { freePort } from '../helpers/ports.js';
import { json } from '../helpers/raw-server.js';

const { setup, sends } = clientFixture();

it('runs once per attempt, after the slot and the token, before the request leaves', async () => {
  let calls = 0;
  const { client } = await setup(
    tokensThen((_req, res) =>
      ++calls === 1
        ? json(res, 429, { statusCode: 429, data: 'Too many' }, { 'retry-after-ms': '100' })
        : json(res, 201, { data: 'success' }),
    ),
  );
  const seen: number[] = [];
  const hook = () => {
    // The request of this attempt has not reached the server yet.
    seen.push(sends().length);
  };
  await client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks: { beforeSend: [hook] } });
  expect(seen).toEqual([0, 1]);
  expect(sends()).toHaveLength(2);
});

it('a hook that fails keeps the request from leaving: not sent, deliveryUnknown false', async () => {
  const { client } = await setup(
    tokensThen((_req, res) => json(res, 201, { data: 'success' })),
    {
      maxRetries: 0,
    },
  );
  const hook = () => Promise.reject(new Error('redis is down'));
  const error = await rejection(
    client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks: { beforeSend: [hook] } }),
  );
  expect(error).toBeInstanceOf(OAConnectionError);
  expect(error.message).toMatch(/beforeSend hook failed: redis is down/);
  expect(error.deliveryUnknown).toBe(false);
  expect(sends()).toHaveLength(0);
});

/**
 * Options with both hooks, and what they and the client's `retry` event saw, in order; each hook notes
 * how many sends the server had received by then.
 */
function recordHooks(client: OAClient) {
  const events: string[] = [];
  const options: RequestOptions = {
    hooks: {
      beforeSend: [() => events.push(`before ${sends().length}`)],
      notDelivered: [() => events.push(`not delivered ${sends().length}`)],
    },
  };
  client.on('retry', (e) => events.push(`retry ${e.reason}`));
  return { events, options };
}

it('its other half runs when an attempt certainly did not deliver, before the wait; not after a 5xx or a success', async () => {
  const answers = [
    () => ({
      status: 429,
      body: { statusCode: 429, data: 'Too many' },
      headers: { 'retry-after-ms': '300' },
    }),
    () => ({ status: 400, body: { statusCode: 400, code: 'JOB_BUSY', info: 'busy' }, headers: {} }),
    () => ({ status: 201, body: { data: 'success' }, headers: {} }),
    () => ({ status: 500, body: { statusCode: 500, data: 'oops' }, headers: {} }),
  ];
  let n = 0;
  const { client } = await setup(
    tokensThen((_req, res) => {
      const answer = (
        answers[n++] as () => { status: number; body: object; headers: Record<string, string> }
      )();
      json(res, answer.status, answer.body, answer.headers);
    }),
    { maxRetries: 1 },
  );
  // Told at once: the request of this attempt is answered, the next one has not left.
  const { events, options } = recordHooks(client);
  await client.sendText({ user_id: 'u1', msg: 'hi' }, options);
  expect(events).toEqual([
    'before 0',
    'not delivered 1',
    'retry rate_limited',
    'before 1',
    'not delivered 2',
    'retry job_busy',
    'before 2',
  ]);
  events.length = 0;
  const error = await rejection(client.sendText({ user_id: 'u1', msg: 'hi' }, options));
  expect(error.deliveryUnknown).toBe(true);
  expect(events).toEqual(['before 3']);
});

const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

it('its other half runs when a connection was refused, before the backoff', async () => {
  const gone = `http://127.0.0.1:${await freePort()}`;
  const agent = new Agent();
  agents.push(agent);
  let refused = 0;
  const { client } = await setup(
    tokensThen((_req, res) => json(res, 201, { data: 'success' })),
    {
      // The first send meets a port nothing listens on; the rest, and the login, reach the server.
      dispatcher: {
        dispatch(options, handler) {
          const refuse = !options.path.includes('/auth/') && refused++ === 0;
          return agent.dispatch({ ...options, origin: refuse ? gone : options.origin }, handler as never);
        },
      },
    },
  );
  const { events, options } = recordHooks(client);
  await client.sendText({ user_id: 'u1', msg: 'hi' }, options);
  expect(events).toEqual(['before 0', 'not delivered 0', 'retry not_sent', 'before 0']);
  expect(sends()).toHaveLength(1);
});
