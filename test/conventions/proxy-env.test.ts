import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer } from '../../src/testing/index.js';
import { listen } from '../helpers/listen.js';

/**
 * A real forward proxy on loopback: it tunnels CONNECT and forwards absolute-form requests, and
 * records each target it was asked for.
 */
async function startProxy() {
  const targets: string[] = [];
  const { url, server, close } = await listen((req, res) => {
    targets.push(req.url ?? '');
    const upstream = httpRequest(req.url ?? '', { method: req.method, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    targets.push(`CONNECT ${req.url}`);
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  return { url, targets, close };
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('HTTPS_PROXY / HTTP_PROXY / NO_PROXY (undici EnvHttpProxyAgent)', () => {
  it('the client goes through the proxy the environment names, and around it for a NO_PROXY host', async () => {
    const proxy = await startProxy();
    const mock = await createMockServer();
    const { host } = new URL(mock.url);
    const credentials = { baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret };
    try {
      vi.stubEnv('HTTP_PROXY', proxy.url);
      vi.stubEnv('HTTPS_PROXY', proxy.url);
      vi.stubEnv('NO_PROXY', '');
      const proxied = new OAClient(credentials);
      await proxied.sendText({ user_id: 'u-1', msg: 'through the proxy' });
      await proxied.close();
      const seen = proxy.targets.length;
      expect(seen).toBeGreaterThan(0);
      expect(proxy.targets.every((t) => t === `CONNECT ${host}` || t.startsWith(`http://${host}/`))).toBe(
        true,
      );
      expect(mock.deliveries.map((d) => d.path)).toEqual(['/api/v2/public/webhook/broadcast-message']);

      vi.stubEnv('NO_PROXY', '127.0.0.1');
      const direct = new OAClient(credentials);
      await direct.sendText({ user_id: 'u-1', msg: 'around it' });
      await direct.close();
      expect(proxy.targets.length).toBe(seen);
      expect(mock.deliveries).toHaveLength(2);
    } finally {
      await mock.close();
      await proxy.close();
    }
  });

  it('a dispatcher of yours is used as it is: the proxy variables do not apply to it', async () => {
    const proxy = await startProxy();
    const mock = await createMockServer();
    const { Agent } = await import('undici');
    const agent = new Agent();
    try {
      vi.stubEnv('HTTP_PROXY', proxy.url);
      vi.stubEnv('NO_PROXY', '');
      const client = new OAClient({
        baseUrl: mock.url,
        apiKey: mock.apiKey,
        apiSecret: mock.apiSecret,
        dispatcher: agent,
      });
      await client.sendText({ user_id: 'u-1', msg: 'direct' });
      await client.close();
      expect(proxy.targets).toEqual([]);
      expect(mock.deliveries).toHaveLength(1);
    } finally {
      await agent.close();
      await mock.close();
      await proxy.close();
    }
  });
});
