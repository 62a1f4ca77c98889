/**
 * A line without details reaches the logger as the message alone: `console.debug(message, undefined)`
 * prints a stray `undefined`. Through the webhook handler and the client, with a console-like logger
 * that keeps every argument it is given.
 */
import { expect, it } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { createWebhookHandler } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { textEvent } from '../webhook/support.js';

/** Like `console`: any number of arguments, each kept as given. */
function consoleLike() {
  const calls: { level: string; args: unknown[] }[] = [];
  const at =
    (level: string) =>
    (...args: unknown[]) =>
      void calls.push({ level, args });
  return { calls, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

it('the webhook handler passes no undefined argument: a duplicate delivery is one argument', async ({
  onTestFinished,
}) => {
  const { calls, logger } = consoleLike();
  const receiver = await listen(createWebhookHandler({ logger, dedupe: true, onEvent: () => {} }));
  onTestFinished(() => receiver.close());
  const body = JSON.stringify(textEvent('twice', 7));
  for (let i = 0; i < 2; i++) {
    const res = await fetch(receiver.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(5_000),
    });
    expect(res.status).toBe(200);
  }
  const skipped = calls.find((call) => String(call.args[0]).includes('duplicate delivery skipped'));
  expect(skipped?.args).toEqual(['oa-messaging webhook: duplicate delivery skipped (200)']);
  expect(calls.filter((call) => call.args.includes(undefined))).toEqual([]);
});

it('the client passes no undefined argument, and keeps the details where a line has them', async ({
  onTestFinished,
}) => {
  const mock = await createMockServer();
  onTestFinished(() => mock.close());
  const { calls, logger } = consoleLike();
  const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret, logger });
  onTestFinished(() => client.close());
  mock.injectFault({ kind: 'error', status: 503 }, { times: 1, path: /auth\/token/ });
  await client.sendText({ user_id: 'user-1', msg: 'hi' });
  expect(calls.length).toBeGreaterThan(1);
  expect(calls.filter((call) => call.args.includes(undefined))).toEqual([]);
  expect(calls.some((call) => call.args.length === 2 && typeof call.args[1] === 'object')).toBe(true);
});
