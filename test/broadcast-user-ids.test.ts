// A repeated user_id in a long broadcast list is found however the ids look, and nothing is sent; a list
// without repeats is sent whole. The check has a fast path for long lists (allDistinct), held here to
// the plain Set answer.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { items, OAClient, OAValidationError } from '../src/index.js';
import { allDistinct } from '../src/schemas/all-distinct.js';
import { json, type RawServer, startRawServer } from './helpers/raw-server.js';

/** Lists of ids long enough for the fast path, shaped as real ids are: counted, numeric, random. */
const idLists = fc
  .record({
    count: fc.integer({ min: 256, max: 3000 }),
    shape: fc.constantFrom('counted', 'numeric', 'uuid', 'shared-end'),
    repeats: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 2 }),
  })
  .map(({ count, shape, repeats }) => {
    const ids = Array.from({ length: count }, (_, i) => {
      if (shape === 'counted') return `user-${String(i).padStart(6, '0')}`;
      if (shape === 'numeric') return String(1_000_000_007 + i * 7919);
      if (shape === 'uuid') return `${i.toString(16).padStart(8, '0')}-5f6a-4b7c-8d9e-0f1a2b3c4d5e`;
      // Differ only before their last 16 characters, which the fast path hashes.
      return `${i}-the-same-last-16-chars`;
    });
    for (const [from, to] of repeats) ids[to % count] = ids[from % count] as string;
    return ids;
  });

describe('allDistinct', () => {
  it('answers as new Set(ids).size === ids.length does, for lists with and without repeats', () => {
    fc.assert(
      fc.property(idLists, (ids) => {
        expect(allDistinct(ids)).toBe(new Set(ids).size === ids.length);
      }),
      { numRuns: 200 },
    );
  });

  it('short lists and the empty list', () => {
    expect(allDistinct([])).toBe(true);
    expect(allDistinct(['a', 'b'])).toBe(true);
    expect(allDistinct(['a', 'a'])).toBe(false);
  });
});

describe('broadcast to a long list of user_ids', () => {
  let server: RawServer;
  let client: OAClient;
  const record = {
    id: 'job-1',
    data: [],
    broadcast_at: '2026-05-10T09:38:46.000Z',
    created_at: '2026-05-10T09:38:46.000Z',
    estimate_time_detail: { total_job_time_minutes: 1 },
  };
  beforeAll(async () => {
    server = await startRawServer((req, res) => {
      if (req.url?.includes('/auth/')) {
        return json(res, 201, {
          data: { access_token: 'a.b.c', refresh_token: 'r-123456', token_type: 'Bearer', expires_in: '1h' },
        });
      }
      return json(res, 201, { data: record });
    });
    client = new OAClient({ baseUrl: server.url, apiKey: 'key-123456', apiSecret: 'secret-abcdef' });
  });
  afterAll(async () => {
    await client.close();
    await server.close();
  });
  const ids = Array.from({ length: 20_000 }, (_, i) => `user-${i}`);

  it('a repeat at the far end is refused with what to do, and nothing is sent', async () => {
    const error = await client
      .broadcast({ target: 'selected', user_ids: [...ids, 'user-0'], items: [items.text('hi')] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAValidationError);
    expect((error as Error).message).toContain('must not repeat a user_id');
    expect(server.hits.filter((hit) => hit.path.includes('broadcast'))).toEqual([]);
  });

  it('a list without repeats is sent whole, in order', async () => {
    const job = await client.broadcast({ target: 'selected', user_ids: ids, items: [items.text('hi')] });
    expect(job.id).toBe('job-1');
    const sent = server.hits.filter((hit) => hit.path.includes('broadcast'));
    expect(sent).toHaveLength(1);
    expect(sent[0]?.body).toMatchObject({ user_ids: ids });
  });
});
