/**
 * DNS rebinding: a page on another site whose name resolves to 127.0.0.1 reaches the fake with its own
 * name in `Host`. The fake (and `oa mock-server`, the same server) answers only loopback names, the
 * host it was told to bind and its `publicUrl`, on every route; a state-changing request whose
 * `Origin` is another site is refused too. Raw node:http requests to 127.0.0.1 set `Host` by hand.
 */
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { MockServer } from '../../src/testing/index.js';
import { settleWithin } from '../helpers/bounded.js';
import { API, mockServerFixture } from './support.js';

const fixture = mockServerFixture();

interface Raw {
  status: number;
  body: string;
}

/** One request to the fake's port on 127.0.0.1 with the given `Host` (and `Origin`). */
function raw(
  mock: MockServer,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Raw> {
  const port = Number(new URL(mock.url).port);
  const sent = new Promise<Raw>((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        setHost: false,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      },
      (res) => {
        // The event stream never ends on its own: its status is all this needs.
        if (path === '/_inbox/events' && res.statusCode === 200) {
          res.destroy();
          resolve({ status: 200, body: '' });
          return;
        }
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  return settleWithin(sent, 5_000, `${method} ${path}`).then((outcome) => {
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  });
}

/** Every kind of route: the page, its state and stream, its controls, media, and the API itself. */
const ROUTES: [method: string, path: string, body?: string][] = [
  ['GET', '/'],
  ['HEAD', '/'],
  ['GET', '/_inbox/state'],
  ['GET', '/_inbox/events'],
  ['GET', '/_inbox/media/0'],
  ['POST', '/_inbox/webhook', JSON.stringify({ url: 'http://127.0.0.1:9/hook' })],
  ['POST', '/_inbox/reply', JSON.stringify({ user_id: 'u1', text: 'hi' })],
  ['POST', '/_inbox/faults', JSON.stringify({ kind: 'rate-limit' })],
  ['POST', '/_inbox/reset', '{}'],
  ['POST', `${API}/auth/token`, JSON.stringify({ api_key: 'k', api_secret: 's' })],
  ['POST', `${API}/webhook/broadcast-greeting`, '{}'],
  ['GET', `${API}/uploads/none.png`],
];

describe('the fake answers only its own names (DNS rebinding)', () => {
  it.each(ROUTES)('%s %s with Host: evil.example is refused with 421', async (method, path, body) => {
    const mock = await fixture.start();
    const port = new URL(mock.url).port;
    const answer = await raw(mock, method, path, { host: `evil.example:${port}` }, body);
    expect(answer.status).toBe(421);
    if (method !== 'HEAD') expect(answer.body).toMatch(/host/i);
    // Nothing reached the fake: no request recorded, no webhook set, no fault waiting.
    expect(mock.requests).toEqual([]);
    expect(mock.webhookUrl).toBeUndefined();
    expect(mock.faults).toEqual([]);
  });

  it.each(ROUTES.filter(([method]) => method === 'POST'))(
    '%s %s with Origin: http://evil.example is refused with 403',
    async (method, path, body) => {
      const mock = await fixture.start();
      const host = new URL(mock.url).host;
      const answer = await raw(mock, method, path, { host, origin: 'http://evil.example' }, body);
      expect(answer.status).toBe(403);
      expect(answer.body).toMatch(/origin/i);
      expect(mock.requests).toEqual([]);
      expect(mock.webhookUrl).toBeUndefined();
      expect(mock.faults).toEqual([]);
    },
  );

  it('a page of another site cannot hide behind Origin: null either', async () => {
    const mock = await fixture.start();
    const host = new URL(mock.url).host;
    const body = JSON.stringify({ url: 'http://127.0.0.1:9/hook' });
    const answer = await raw(mock, 'POST', '/_inbox/webhook', { host, origin: 'null' }, body);
    expect(answer.status).toBe(403);
    expect(mock.webhookUrl).toBeUndefined();
  });

  it.each(['127.0.0.1:PORT', 'localhost:PORT', 'LOCALHOST:PORT', '[::1]:PORT', '127.0.0.1'])(
    'Host: %s is served on every route',
    async (template) => {
      const mock = await fixture.start();
      const host = template.replace('PORT', new URL(mock.url).port);
      expect((await raw(mock, 'GET', '/', { host })).status).toBe(200);
      expect((await raw(mock, 'GET', '/_inbox/state', { host })).status).toBe(200);
      expect((await raw(mock, 'GET', '/_inbox/events', { host })).status).toBe(200);
      const origin = `http://${host}`;
      const hook = JSON.stringify({ url: 'http://127.0.0.1:9/hook' });
      expect((await raw(mock, 'POST', '/_inbox/webhook', { host, origin }, hook)).status).toBe(200);
      expect(mock.webhookUrl).toBe('http://127.0.0.1:9/hook');
      const login = JSON.stringify({ api_key: mock.apiKey, api_secret: mock.apiSecret });
      expect((await raw(mock, 'POST', `${API}/auth/token`, { host }, login)).status).toBe(201);
      // A page of another local tool (another port on loopback) may drive it too.
      const local = { host, origin: 'http://localhost:5173' };
      expect((await raw(mock, 'POST', '/_inbox/faults/clear', local, '{}')).status).toBe(200);
    },
  );

  it('the host it was told to bind and the host of its publicUrl are served', async () => {
    const mock = await fixture.start({ host: '127.0.0.1', publicUrl: 'http://oa-fake.test:8080' });
    const port = new URL(mock.url).port;
    expect((await raw(mock, 'GET', '/', { host: `127.0.0.1:${port}` })).status).toBe(200);
    expect((await raw(mock, 'GET', '/', { host: 'oa-fake.test:8080' })).status).toBe(200);
    const origin = 'http://oa-fake.test:8080';
    const answer = await raw(mock, 'POST', '/_inbox/reset', { host: 'oa-fake.test:8080', origin }, '{}');
    expect(answer.status).toBe(200);
    expect((await raw(mock, 'GET', '/', { host: 'other.test:8080' })).status).toBe(421);
  });
});
