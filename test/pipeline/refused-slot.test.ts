import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type DispatcherLike,
  type OAClient,
  OAConnectionError,
  type OAError,
  type TokenStore,
} from '../../src/index.js';
import { rejectsWithin, settleWithin } from '../helpers/bounded.js';
import { clientFixture, tokensThen } from '../helpers/client-fixture.js';
import { freePort } from '../helpers/ports.js';
import { json } from '../helpers/raw-server.js';
import { tokenPair } from '../helpers/tokens.js';

/**
 * A request that never left must not count in the rate limit: with 2 requests a minute, a refused
 * attempt and then two calls, the two go out at once instead of one of them waiting a minute.
 */
const fixture = clientFixture();
const answer = tokensThen((_req, res) => json(res, 201, { data: 'success' }));

const agents: Agent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((made) => (made.closed ? undefined : made.close())));
});

function agent(): Agent {
  const made = new Agent();
  agents.push(made);
  return made;
}

/** A token pair already in the store (whatever OA it is asked for): no login takes a slot of its own. */
function storeWithToken(): TokenStore {
  const now = Date.now();
  const token = { ...tokenPair(1), obtained_at: now, expires_at: now + 3_600_000 };
  return { get: () => token, set() {}, delete() {} };
}

/** Sends through `working`, except the first request, which goes to `refusing`. */
function firstThrough(refusing: DispatcherLike, working: DispatcherLike): DispatcherLike {
  let first = true;
  return {
    dispatch(options, handler) {
      const to = first ? refusing : working;
      first = false;
      return to.dispatch(options, handler);
    },
  };
}

const send = (client: OAClient) => client.sendText({ user_id: 'u-1', msg: 'hi' }, { maxRetries: 0 });

const CASES: [string, () => Promise<DispatcherLike>][] = [
  [
    'a dispatcher whose dispatch throws',
    async () => {
      const thrower: DispatcherLike = {
        dispatch() {
          throw new Error('no socket for you');
        },
      };
      return firstThrough(thrower, agent());
    },
  ],
  [
    'a closed dispatcher',
    async () => {
      const closed = agent();
      await closed.close();
      return firstThrough(closed, agent());
    },
  ],
  [
    'a refused connection',
    async () => {
      const gone = `http://127.0.0.1:${await freePort()}`;
      const working = agent();
      let first = true;
      return {
        dispatch(options, handler) {
          const origin = first ? gone : options.origin;
          first = false;
          return working.dispatch({ ...options, origin }, handler);
        },
      };
    },
  ],
];

describe.each(CASES)('a request refused before it left (%s)', (_name, dispatcher) => {
  it('gives its rate-limit slot back: the next two calls go out at once', async () => {
    const { client, server } = await fixture.setup(answer, {
      dispatcher: await dispatcher(),
      tokenStore: storeWithToken(),
      rateLimit: { general: { max: 2, windowMs: 60_000 } },
    });
    const error = (await rejectsWithin(send(client), 5000, 'the refused call')) as OAError;
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error.deliveryUnknown).toBe(false);
    expect(server.hits).toEqual([]);

    const waits: unknown[] = [];
    client.on('rateLimitWait', (event) => waits.push(event));
    const both = Promise.all([send(client), send(client)]);
    const outcome = await settleWithin(both, 3000, 'the two calls after the refused one');
    expect(outcome.ok).toBe(true);
    expect(server.hits).toHaveLength(2);
    expect(waits).toEqual([]);
  });
});
