import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  isOAError,
  items,
  OAClient,
  OAConnectionError,
  type OAError,
  OAInternalServerError,
  OAJobBusyError,
  OARateLimitError,
  OAResponseValidationError,
  OATimeoutError,
  OAUnauthorizedError,
} from '../../src/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { API } from '../helpers/client-fixture.js';
import { type FaultName, startFaultServer } from '../helpers/fault-server.js';

const PNG = readFileSync(new URL('../fixtures/media/sample.png', import.meta.url));

/** The per-call deadline of every cell; the client's own `timeoutMs` (per attempt) is 1000. */
const DEADLINE_MS = 2500;

type Kind = 'token' | 'send' | 'broadcast' | 'upload';

/** Each endpoint kind: the path the fault hits, the call, and whether it is a send ("at most once"). */
const KINDS: Record<Kind, { path: string; isSend: boolean; call: (c: OAClient) => Promise<unknown> }> = {
  token: {
    path: `${API}/auth/token`,
    isSend: false,
    call: (c) => c.generateToken({ timeoutMs: DEADLINE_MS }),
  },
  send: {
    path: `${API}/webhook/broadcast-message`,
    isSend: true,
    call: (c) => c.sendText({ user_id: 'u1', msg: 'hi' }, { timeoutMs: DEADLINE_MS }),
  },
  broadcast: {
    path: `${API}/message/broadcast-message`,
    isSend: true,
    call: (c) => c.broadcast({ target: 'all', items: [items.text('hi')] }, { timeoutMs: DEADLINE_MS }),
  },
  upload: {
    path: `${API}/upload/image`,
    isSend: false,
    call: (c) => c.uploadImage(PNG, { timeoutMs: DEADLINE_MS }),
  },
};

type ErrorClass = abstract new (...args: never[]) => OAError;

/**
 * The classes a call may reject with (the first is the documented one), and its `deliveryUnknown`.
 * `retriedToDeadline`: the fault is retried until the call's deadline, whose last attempt may start with
 * as little as 250 ms left; on a loaded machine the deadline may end that attempt, and the call then
 * rejects with `OATimeoutError` after two requests or more.
 */
type Outcome = { classes: ErrorClass[]; deliveryUnknown: boolean; retriedToDeadline?: boolean };

/** One row of the contract: a send or broadcast's outcome, then a token call's or an upload's. */
const row = (
  send: ErrorClass[],
  sendUnknown: boolean,
  other: ErrorClass[],
  otherUnknown: boolean,
  retriedToDeadline = false,
) => ({
  send: { classes: send, deliveryUnknown: sendUnknown, retriedToDeadline },
  other: { classes: other, deliveryUnknown: otherUnknown, retriedToDeadline },
});

const RATE_LIMITED = row([OARateLimitError], false, [OARateLimitError], false, true);

/**
 * The contract (API.md "Errors" and "Retries"), per fault: what a send or broadcast rejects with and
 * its `deliveryUnknown`, then the same for a token call or an upload. Sends are never repeated once
 * the request may have reached the server, so they report `deliveryUnknown: true` there; token calls
 * and uploads retry those failures, and nothing a user sees happened twice. Where they retry until
 * the deadline, the deadline may end the call (`OATimeoutError`) before the last answer does.
 * 429, `JOB_BUSY` and a 401 replay are retried within the budget: the API did not act.
 */
const CONTRACT: Record<FaultName, { send: Outcome; other: Outcome }> = {
  // The client cannot tell a reset before the server read the body from one after it: bytes left.
  'reset before read': row([OAConnectionError], true, [OAConnectionError], false),
  'reset after read': row([OAConnectionError], true, [OAConnectionError], false),
  '502 HTML': row([OAInternalServerError], true, [OAInternalServerError, OATimeoutError], false),
  '503 Retry-After: 1': row([OAInternalServerError], true, [OAInternalServerError, OATimeoutError], false),
  hang: row([OATimeoutError], true, [OATimeoutError], false),
  trickle: row([OATimeoutError], true, [OATimeoutError], false),
  // A 2xx: the request succeeded; only its answer is unreadable.
  'invalid JSON': row([OAResponseValidationError], true, [OAResponseValidationError], false),
  'wrong data shape': row([OAResponseValidationError], true, [OAResponseValidationError], false),
  '429 no Retry-After': RATE_LIMITED,
  '429 Retry-After: 0': RATE_LIMITED,
  '429 Retry-After: past date': RATE_LIMITED,
  '429 Retry-After: -1': RATE_LIMITED,
  '429 retry-after-ms: 0': RATE_LIMITED,
  '429 Retry-After: 2': RATE_LIMITED,
  JOB_BUSY: row([OAJobBusyError], false, [OAJobBusyError], false, true),
  // One refresh and one replay, then final.
  '401': row([OAUnauthorizedError], false, [OAUnauthorizedError], false),
};

/** More requests than this to one endpoint means a retry loop without a budget (maxRetries is 2). */
const MAX_REQUESTS = 15;

const cells = (Object.keys(KINDS) as Kind[]).flatMap((kind) =>
  (Object.keys(CONTRACT) as FaultName[]).map((fault) => ({ kind, fault })),
);

describe.concurrent('fault matrix: every call settles with its documented error, no send twice', () => {
  // Cells run side by side, each with its own server and client, closed by the cell itself.
  it.for(cells)('$kind x $fault', async ({ kind, fault }, { onTestFinished }) => {
    const { path, isSend, call } = KINDS[kind];
    const server = await startFaultServer(path, fault);
    const client = new OAClient({
      baseUrl: server.url,
      apiKey: 'key-123456',
      apiSecret: 'secret-abcdef',
      maxRetries: 2,
      timeoutMs: 1000,
    });
    // The server first: closing the client waits for requests still in flight (a hang).
    onTestFinished(async () => {
      await server.close();
      await client.close();
    });

    const outcome = await settleWithin(call(client), DEADLINE_MS + 1000, `${kind} under "${fault}"`);
    const expected = CONTRACT[fault][isSend ? 'send' : 'other'];
    if (outcome.ok) expect.fail(`${kind} under "${fault}" resolved: ${JSON.stringify(outcome.value)}`);
    const error = outcome.error as OAError;
    expect(isOAError(error), String(error)).toBe(true);
    if (expected.retriedToDeadline && error instanceof OATimeoutError) {
      // The deadline ended a retry: the fault was met and retried first. A send's last attempt may or
      // may not have left; a token call's or an upload's did nothing twice.
      expect(server.count(path), error.message).toBeGreaterThanOrEqual(2);
      if (!isSend) expect(error.deliveryUnknown, error.message).toBe(false);
    } else {
      expect(
        expected.classes.some((cls) => error instanceof cls),
        `${error.name} (${error.message}) is not ${expected.classes.map((c) => c.name).join(' or ')}`,
      ).toBe(true);
      expect(error.deliveryUnknown, error.message).toBe(expected.deliveryUnknown);
    }
    expect(server.count(path)).toBeLessThanOrEqual(MAX_REQUESTS);
    if (isSend) expect(server.deliveries(path)).toBeLessThanOrEqual(1);
  });
});
