/** Edges of the pipeline: a network lost mid-request, a hook, the queue, renewals, listeners, options. */
import { Readable } from 'node:stream';
import { Dispatcher } from 'undici';
import { expect, it } from 'vitest';
import { items, OAClient, OAConnectionError, OATimeoutError, OAValidationError } from '../../src/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { API, clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';
import { runScript } from '../helpers/run-script.js';
import { tokenPair } from '../helpers/tokens.js';

const { setup, sends } = clientFixture();

it('a send that fails with EHOSTUNREACH after undici began to write is not retried', async () => {
  let acted = 0;
  /** A dispatcher whose network drops once a send's request is out (the server acted on it). */
  class DroppingNetwork extends Dispatcher {
    override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const ctl = { aborted: false, paused: false, reason: null, abort() {}, pause() {}, resume() {} };
      setImmediate(() => {
        handler.onRequestStart?.(ctl, {});
        if (opts.path.endsWith('/auth/token')) {
          handler.onResponseStart?.(ctl, 201, { 'content-type': 'application/json' }, 'Created');
          handler.onResponseData?.(ctl, Buffer.from(JSON.stringify({ data: tokenPair(1) })));
          handler.onResponseEnd?.(ctl, {});
          return;
        }
        acted++;
        handler.onResponseError?.(
          ctl,
          Object.assign(new Error('read EHOSTUNREACH'), { code: 'EHOSTUNREACH' }),
        );
      });
      return true;
    }
  }
  const client = new OAClient({
    baseUrl: 'https://oa.example.com',
    apiKey: 'k-123456',
    apiSecret: 's-abcdef',
    dispatcher: new DroppingNetwork(),
  });
  const error = await rejection(client.sendText({ user_id: 'u1', msg: 'hi' }));
  expect(error).toBeInstanceOf(OAConnectionError);
  expect(error.deliveryUnknown).toBe(true);
  expect(acted).toBe(1);
  await client.close();
});

it('a beforeSend hook that hangs is ended by the deadline and by close(); nothing is sent', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  const hang = () => new Promise(() => {});
  const timedOut = await settleWithin(
    client.sendText({ user_id: 'u1', msg: 'hi' }, { timeoutMs: 300, hooks: { beforeSend: [hang] } }),
    2000,
    'the call with a hanging hook and a deadline',
  );
  expect(timedOut).toMatchObject({ ok: false });
  const error = (timedOut as { error: OATimeoutError }).error;
  expect(error).toBeInstanceOf(OATimeoutError);
  expect(error.deliveryUnknown).toBe(false);
  const pending = client.sendText({ user_id: 'u1', msg: 'hi' }, { hooks: { beforeSend: [hang] } });
  setTimeout(() => void client.close(), 100);
  const closed = await settleWithin(pending, 2000, 'the call with a hanging hook, closed');
  expect(closed).toMatchObject({ ok: false });
  expect(sends()).toHaveLength(0);
});

it('a call that times out in the rate-limit queue does not keep the process alive', async () => {
  const started = performance.now();
  const { code, output } = await runScript(
    new URL('./scripts/queued-timeout.ts', import.meta.url),
    [],
    15_000,
  );
  // The login takes one of the three slots: two sends go, the others time out in the queue.
  expect(output).toMatch(/^(?=.*fulfilled)(?=.*rejected)(fulfilled|rejected)( (fulfilled|rejected)){3}$/m);
  expect(code).toBe(0);
  // The window is 20 s: a process held by the abandoned place in the queue would still be running.
  expect(performance.now() - started).toBeLessThan(10_000);
}, 20_000);

it('uploads that wait for the first login do not lend it their upload slot', async () => {
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  const { client } = await setup(
    tokensThen((_req, res) =>
      json(res, 201, { data: { src_file: 'a.png', url: 'https://cdn.example.com/a.png' } }),
    ),
    { rateLimit: { general: { max: 20, windowMs: 60_000 }, upload: { max: 2, windowMs: 60_000 } } },
  );
  const both = Promise.all([client.uploadImage(PNG), client.uploadImage(PNG)]);
  expect(await settleWithin(both, 3000, 'two uploads within the upload limit')).toMatchObject({ ok: true });
});

it('after a 401 whose renewal failed, the retry does not send the refused token again', async () => {
  let logins = 0;
  let revoked = '';
  const { client } = await setup((req, res) => {
    if (req.url === `${API}/auth/token`) {
      logins++;
      if (logins === 2) return json(res, 502, { statusCode: 502, data: 'Bad gateway' });
      const pair = tokenPair(logins);
      if (logins === 1) revoked = pair.access_token;
      return json(res, 201, { data: pair });
    }
    if (req.url === `${API}/auth/refresh-token`) {
      return json(res, 400, {
        statusCode: 400,
        data: { code: 'BAD_REQUEST', info: 'refresh token revoked' },
      });
    }
    if (req.headers.authorization === `Bearer ${revoked}`)
      return json(res, 401, { statusCode: 401, data: 'Unauthorized' });
    return json(res, 201, { data: 'success' });
  });
  await expect(client.sendText({ user_id: 'u1', msg: 'hi' })).resolves.toBe('success');
  const refused = sends().filter((hit) => hit.authorization === `Bearer ${revoked}`);
  expect(refused).toHaveLength(1);
});

it('an async listener or logger that rejects never becomes an unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const { client } = await setup(
      tokensThen((_req, res) => json(res, 201, { data: 'success' })),
      {
        logger: { debug: async () => Promise.reject(new Error('log sink down')) },
      },
    );
    client.on('request', async () => Promise.reject(new Error('metrics down')));
    await expect(client.sendText({ user_id: 'u1', msg: 'hi' })).resolves.toBe('success');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

it('bad options to a broadcast or a one-call helper: OAValidationError, nothing sent, the stream closed', async () => {
  const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
  const broadcast = { target: 'all' as const, items: [items.text('hi')] };
  expect(await rejection(client.broadcast(broadcast, null as never))).toBeInstanceOf(OAValidationError);
  expect(await rejection(client.broadcast(broadcast, { signal: 'x' } as never))).toBeInstanceOf(
    OAValidationError,
  );
  const stream = Readable.from(
    (async function* () {
      yield Buffer.alloc(10);
      await new Promise(() => {});
    })(),
  );
  expect(await rejection(client.sendImageFile('u1', stream, null as never))).toBeInstanceOf(
    OAValidationError,
  );
  expect(stream.destroyed).toBe(true);
  expect(sends()).toHaveLength(0);
});
