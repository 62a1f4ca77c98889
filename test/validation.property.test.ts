import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OAClient, OAValidationError } from '../src/index.js';
import { json, type RawServer, startRawServer } from './helpers/raw-server.js';

const UUID = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
const audio = {
  audio_url: 'https://storage.example.com/a.mp3',
  audio_uuid: UUID,
  audio_size: 100,
  audio_duration: 3,
};
const text = { type: 'message', msg: 'hello' };

/** A valid call of every JSON method; the property corrupts one thing and expects a refusal. */
const valid = {
  sendGreeting: { user_id: 'u1' },
  sendImage: { user_id: 'u1', image_url: 'https://c.example/a.png', link: 'https://example.com' },
  sendText: { user_id: 'u1', msg: 'hi', desc: 'd' },
  sendVideo: { user_id: 'u1', ticket_id: UUID },
  sendAudio: { user_id: 'u1', ...audio },
  broadcast: { target: 'selected', user_ids: ['u1', 'u2'], items: [text] },
  broadcastToGroup: { account_provider_group_id: UUID, items: [text] },
  broadcastToMemberSession: { member_group_broadcast_id: UUID, items: [text] },
} as const;
type Method = keyof typeof valid;
const methods = Object.keys(valid) as Method[];

/** Values of the wrong kind for any field: none of them is a non-blank string, a URL, a UUID or a positive number. */
const wrongValue = fc.oneof(
  fc.constant(null),
  fc.constant(''),
  fc.constant('   '),
  fc.boolean(),
  fc.integer({ max: 0 }),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
);

const notUrlOrUuid = fc.oneof(
  fc.constantFrom('not a url', 'ftp://x.example/a', 'javascript:alert(1)', '1234', 'a1b2c3d4-e5f6'),
  fc.string({ maxLength: 12 }).filter((s) => !s.includes(':') && s.length !== 36),
);

/** Ways to break a valid item. */
const badItem = fc.oneof(
  fc.record({
    type: fc.constant('message'),
    msg: fc.constant(''),
    desc: fc.string({ minLength: 171, maxLength: 300 }).filter((s) => Array.from(s).length > 170),
  }),
  fc.record({
    type: fc.constant('message'),
    msg: fc.constant('x'),
    desc: fc
      .string({ unit: 'grapheme', minLength: 171, maxLength: 220 })
      .filter((s) => Array.from(s).length > 170),
  }),
  fc.record({ type: fc.constant('oa_image_link'), msg: fc.constant('https://c.example/a.png') }),
  fc.record({
    type: fc.constant('oa_image_link'),
    msg: notUrlOrUuid,
    link: fc.constant('https://example.com'),
  }),
  fc.record({ type: fc.constant('image'), msg: notUrlOrUuid }),
  fc.record({ type: fc.constant('flex'), msg: fc.constantFrom('{not json', 'plain', '42', '"str"') }),
  fc.record({ type: fc.constant('video'), msg: notUrlOrUuid }),
  fc.constantFrom('audio_uuid', 'audio_size', 'audio_duration').map((drop) => {
    const item: Record<string, unknown> = { type: 'audio', msg: audio.audio_url, ...audio };
    delete item.audio_url;
    delete item[drop];
    return item;
  }),
  fc.record({
    type: fc
      .string({ maxLength: 10 })
      .filter((t) => !['message', 'image', 'oa_image_link', 'flex', 'video', 'audio'].includes(t)),
    msg: fc.constant('x'),
  }),
  wrongValue,
);

/** One corruption of valid params for a method. */
function corrupt(method: Method): fc.Arbitrary<unknown> {
  const base = valid[method] as Record<string, unknown>;
  const keys = Object.keys(base);
  const choices: fc.Arbitrary<unknown>[] = [
    // Not an object at all.
    fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.string(),
      fc.integer(),
      fc.array(fc.anything(), { maxLength: 3 }),
    ),
    // A required field missing (every field of these fixtures is required but `link` and `desc`).
    fc.constantFrom(...keys.filter((k) => k !== 'link' && k !== 'desc')).map((k) => {
      const copy = { ...base };
      delete copy[k];
      return copy;
    }),
    // A field of the wrong kind.
    fc
      .tuple(fc.constantFrom(...keys.filter((k) => k !== 'desc')), wrongValue)
      .map(([k, v]) => ({ ...base, [k]: v })),
    // An unknown field (a typo such as `userId`). sendAudio drops unknown fields instead: its five fields
    // are all required, so a typo still fails as a missing field, and `{ user_id, ...upload }` keeps
    // working when the upload answer gains a field.
    fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !keys.includes(k) && k !== '__proto__'),
        fc.anything(),
      )
      // For sendAudio the unknown field comes with a real mistake, so the case still must reject.
      .map(([k, v]) => (method === 'sendAudio' ? { ...base, [k]: v, user_id: 42 } : { ...base, [k]: v })),
  ];
  if ('items' in base) {
    choices.push(
      fc.array(fc.constant(text), { minLength: 6, maxLength: 20 }).map((list) => ({ ...base, items: list })),
      fc.constant({ ...base, items: [] }),
      fc.tuple(badItem, fc.nat(4)).map(([item, at]) => {
        const list: unknown[] = [text, text, text, text].slice(0, at);
        list.push(item);
        return { ...base, items: list };
      }),
    );
  }
  if (method === 'broadcast') {
    choices.push(
      fc.constant({ target: 'all', user_ids: ['u1'], items: [text] }),
      fc.constant({ target: 'selected', user_ids: [], items: [text] }),
      fc.constant({ target: 'selected', items: [text] }),
      fc.constant({ target: 'selected', user_ids: ['u1', 'u1'], items: [text] }),
      fc
        .array(fc.string({ minLength: 1 }), { minLength: 2, maxLength: 5 })
        .map((ids) => ({ target: 'single', user_ids: ids, items: [text] })),
      fc
        .string()
        .filter((t) => !['all', 'selected', 'single'].includes(t))
        .map((t) => ({ ...base, target: t })),
    );
  }
  if (method === 'sendImage') choices.push(notUrlOrUuid.map((u) => ({ ...base, link: u })));
  if (method === 'sendAudio')
    choices.push(fc.double({ max: -0.001, noNaN: true }).map((d) => ({ ...base, audio_duration: d })));
  return fc.oneof(...choices);
}

let server: RawServer;
let client: OAClient;
beforeAll(async () => {
  const record = {
    id: 'b',
    data: [],
    broadcast_at: 'x',
    created_at: 'y',
    estimate_time_detail: { total_job_time_minutes: 0 },
  };
  const greeting = { id: UUID, title: 't', slug: 's', data: [] };
  server = await startRawServer((req, res) => {
    if (req.url?.includes('/auth/')) {
      return json(res, 201, {
        data: { access_token: 'a.b.c', refresh_token: 'r-123456', token_type: 'Bearer', expires_in: '1h' },
      });
    }
    if (req.url?.includes('/message/')) return json(res, 201, { data: record });
    if (req.url?.includes('greeting')) return json(res, 201, { data: greeting });
    return json(res, 201, { data: 'success' });
  });
  client = new OAClient({ baseUrl: server.url, apiKey: 'key-123456', apiSecret: 'secret-abcdef' });
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('validation before any I/O', () => {
  it('the valid fixtures are valid (so the property below tests the corruption alone)', async () => {
    for (const method of methods) {
      await expect(
        (client[method] as (p: unknown) => Promise<unknown>)(valid[method]),
      ).resolves.toBeDefined();
    }
    server.hits.length = 0;
  });

  it('random invalid params reject with OAValidationError and never reach the network', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...methods).chain((m) => fc.tuple(fc.constant(m), corrupt(m))),
        async ([method, params]) => {
          server.hits.length = 0;
          const call = (client[method] as (p: unknown) => Promise<unknown>).bind(client);
          const error = await call(params).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(error).toBeInstanceOf(OAValidationError);
          expect((error as OAValidationError).issues.length).toBeGreaterThan(0);
          expect((error as OAValidationError).message).toMatch(new RegExp(`^Invalid ${method} params: `));
          expect(server.hits).toHaveLength(0);
        },
      ),
      { numRuns: 600 },
    );
  });

  it('messages name the field and the rule', async () => {
    const error = await client
      .broadcast({
        target: 'all',
        items: [{ type: 'oa_image_link', msg: 'https://c.example/a.png' } as never],
      })
      .catch((e: unknown) => e as OAValidationError);
    expect(error).toBeInstanceOf(OAValidationError);
    expect((error as OAValidationError).message).toContain('items[0].link');
    const long = await client
      .broadcast({ target: 'all', items: [{ type: 'message', msg: 'x', desc: 'é'.repeat(171) }] })
      .catch((e: unknown) => e as OAValidationError);
    expect((long as OAValidationError).message).toContain(
      'items[0].desc (item 1): must be at most 170 characters',
    );
    const ok = await client.broadcast({
      target: 'all',
      items: [{ type: 'message', msg: 'x', desc: '😀'.repeat(170) }],
    });
    expect(ok).toBeDefined();
  });
});
