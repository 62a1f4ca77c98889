import { describe, expect, it } from 'vitest';
import { OAClient, OAConnectionError, type OAResponseInfo } from '../../src/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { rejection } from '../helpers/client-fixture.js';

describe('the request id and headers of a successful answer (onResponse)', () => {
  it('tells each call of the answer that settled it, its x-request-id included', async () => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    try {
      const seen: OAResponseInfo[] = [];
      const [a, b] = await Promise.all([
        client.sendText({ user_id: 'u-1', msg: 'one' }, { onResponse: (r) => seen.push(r) }),
        client.sendText({ user_id: 'u-2', msg: 'two' }, { onResponse: undefined }),
      ]);
      expect([a, b]).toEqual(['success', 'success']);
      expect(seen).toHaveLength(1);
      const [info] = seen;
      expect(info?.status).toBeGreaterThanOrEqual(200);
      expect(info?.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(info?.headers['x-request-id']).toBe(info?.requestId);
      expect(info?.attempt).toBe(1);
    } finally {
      await client.close();
      await mock.close();
    }
  });

  it('an onResponse that throws does not turn a delivered send into a failure', async () => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    try {
      const sent = await client.sendText(
        { user_id: 'u-1', msg: 'hi' },
        {
          onResponse: () => {
            throw new Error('metrics are down');
          },
        },
      );
      expect(sent).toBe('success');
      expect(mock.deliveries).toHaveLength(1);
    } finally {
      await client.close();
      await mock.close();
    }
  });
});

describe('await using (Symbol.asyncDispose)', () => {
  it('closes the client when the block ends: a call after it is refused, nothing sent', async () => {
    const mock = await createMockServer();
    let kept: OAClient | undefined;
    try {
      {
        await using client = new OAClient({
          baseUrl: mock.url,
          apiKey: mock.apiKey,
          apiSecret: mock.apiSecret,
        });
        kept = client;
        expect(await client.sendText({ user_id: 'u-1', msg: 'in the block' })).toBe('success');
      }
      const after = await rejection(kept.sendText({ user_id: 'u-1', msg: 'after' }));
      expect(after).toBeInstanceOf(OAConnectionError);
      expect(after.message).toMatch(/the client is closed/);
      expect(mock.deliveries).toHaveLength(1);
    } finally {
      await mock.close();
    }
  });
});
