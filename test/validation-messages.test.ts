// The words of the SDK's validation errors: the field, the rule, what to do, items and entries counted
// from 1, while `issues[].path` stays the 0-based path code spells.
import { afterAll, describe, expect, it } from 'vitest';
import { items, OAClient, OAValidationError } from '../src/index.js';
import { createOutbox } from '../src/queue/index.js';

const client = new OAClient({
  baseUrl: 'http://127.0.0.1:9',
  apiKey: 'key-1',
  apiSecret: 'secret-1',
  allowInsecureHttp: true,
  maxRetries: 0,
});
afterAll(() => client.close());

async function refusal(call: () => Promise<unknown>): Promise<OAValidationError> {
  const error = await call().catch((e: unknown) => e);
  expect(error).toBeInstanceOf(OAValidationError);
  return error as OAValidationError;
}

describe('SDK validation messages', () => {
  it('a missing field of an item: the field, the item counted from 1, what it must be', async () => {
    const error = await refusal(() =>
      client.broadcast({
        target: 'all',
        items: [items.text('hi'), { type: 'oa_image_link', msg: 'https://cdn.example.com/a.png' } as never],
      }),
    );
    expect(error.message).toBe(
      'Invalid broadcast params: items[1].link (item 2): required: a URL (http or https)',
    );
    expect(error.issues).toEqual([
      { path: ['items', 1, 'link'], message: 'required: a URL (http or https)' },
    ]);
  });

  it("user_ids with target 'all' says what to use instead", async () => {
    const error = await refusal(() =>
      client.broadcast({ target: 'all', user_ids: ['u1'], items: [items.text('hi')] } as never),
    );
    expect(error.message).toBe(
      "Invalid broadcast params: user_ids: not allowed with target 'all' (use target 'selected', or drop user_ids)",
    );
    expect(error.issues[0]?.path).toEqual([]);
  });

  it('missing, empty and too many items', async () => {
    const missing = await refusal(() => client.broadcast({ target: 'all' } as never));
    expect(missing.message).toBe(
      'Invalid broadcast params: items: required: 1 to 5 message items (an array)',
    );
    const empty = await refusal(() => client.broadcast({ target: 'all', items: [] }));
    expect(empty.message).toMatch(
      /^Invalid broadcast params: items: must hold 1 to 5 message items, not none/,
    );
    const six = await refusal(() =>
      client.broadcastToGroup({
        account_provider_group_id: '0b7e4a52-2a8e-4b6e-9d55-3f1b7c1e9a10',
        items: Array.from({ length: 6 }, () => items.text('x')),
      }),
    );
    expect(six.message).toBe(
      'Invalid broadcastToGroup params: items: must hold 1 to 5 message items: send the rest in another broadcast',
    );
  });

  it('no message is in the words of zod', async () => {
    const calls = [
      () => client.sendText({ user_id: 'u1' } as never),
      () => client.sendText({ user_id: 'u1', msg: 'x', usr: 'u' } as never),
      () => client.sendText({ user_id: 'u1', msg: 'x', desc: 3 } as never),
      () => client.sendText(undefined as never),
      () => client.broadcast({ target: 'some', items: [items.text('x')] } as never),
      () => client.broadcast({ target: 'all', items: ['x'] } as never),
      () => client.broadcast({ target: 'all', items: [{ msg: 'x' }] } as never),
      () => client.broadcast({ target: 'selected', user_ids: [1], items: [items.text('x')] } as never),
      () =>
        client.sendAudio({
          user_id: 'u1',
          audio_url: 'https://cdn.example.com/a.mp3',
          audio_uuid: 'nope',
          audio_size: -1,
          audio_duration: '3',
        } as never),
      () => client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: -1, maxRetries: 1.5 }),
    ];
    for (const call of calls) {
      const error = await refusal(call);
      expect(error.message).not.toMatch(
        /Invalid input|Unrecognized key|Too (small|big)|expected \w+, received/,
      );
      for (const issue of error.issues) expect(issue.message).toMatch(/^(required|must|not|[\w, ]+: not)/);
    }
  });

  it('the elements of user_ids are counted from 1', async () => {
    const error = await refusal(() =>
      client.broadcast({ target: 'selected', user_ids: ['u1', ' '], items: [items.text('x')] }),
    );
    expect(error.message).toBe(
      'Invalid broadcast params: user_ids[1] (user_id 2): must not be empty or only white space',
    );
  });
});

describe('outbox.addMany names its entries counted from 1', () => {
  // Entries are checked before Redis is reached: nothing listens at this URL.
  const outbox = createOutbox({ connection: { url: 'redis://127.0.0.1:9' } });
  afterAll(() => outbox.close());
  const ok = { method: 'sendText', params: { user_id: 'u1', msg: 'a' }, key: 'a' } as const;

  it('a bad params field', async () => {
    const error = await refusal(() =>
      outbox.addMany([ok, { method: 'sendText', params: { user_id: 'u2' } as never, key: 'b' }]),
    );
    expect(error.message).toBe('entry 2: Invalid sendText params: msg: required: a non-empty string');
    expect(error.issues[0]?.path).toEqual([1, 'params', 'msg']);
  });

  it('an unknown method, a bad key', async () => {
    const method = await refusal(() => outbox.addMany([{ ...ok, method: 'uploadImage' } as never]));
    expect(method.message).toMatch(/^entry 1: method: must be one of sendText, .* \(got uploadImage\)$/);
    expect(method.issues[0]?.path).toEqual([0, 'method']);
    const key = await refusal(() => outbox.addMany([ok, ok, { ...ok, key: '' }]));
    expect(key.message).toMatch(/^entry 3: key: must be a string of 1 to 512 characters/);
    const one = await refusal(() =>
      outbox.add('sendText', { user_id: 'u1', msg: 'x' }, { key: 'k', priority: 0 }),
    );
    expect(one.message).toBe('priority: must be a whole number from 1 to 2097152');
  });
});
