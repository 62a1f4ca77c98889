import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { OAAbortError, OAClient, OAConnectionError, OATimeoutError } from '../../src/index.js';
import { clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { freePort } from '../helpers/ports.js';
import { json } from '../helpers/raw-server.js';
import { tokenPair } from '../helpers/tokens.js';

const { setup, hits } = clientFixture();

describe('a reset after the server processed the request', () => {
  it('a send rejects with OAConnectionError and deliveryUnknown, sent once', async () => {
    const { client } = await setup(tokensThen((req) => void req.socket.destroy()));
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error).not.toBeInstanceOf(OATimeoutError);
    expect(error.deliveryUnknown).toBe(true);
    expect(error.cause).toBeDefined();
    expect(hits('/webhook/broadcast-message')).toBe(1);
  });

  it('a token call is retried and succeeds', async () => {
    let calls = 0;
    const { client } = await setup((req, res) => {
      calls++;
      if (calls === 1) return void req.socket.destroy();
      json(res, 201, { data: tokenPair(1) });
    });
    await expect(client.generateToken()).resolves.toMatchObject({ token_type: 'Bearer' });
    expect(hits('/auth/token')).toBe(2);
  });
});

describe('an answer that never comes', () => {
  it('rejects with OATimeoutError after timeoutMs, deliveryUnknown on a send', async () => {
    const { client } = await setup(
      tokensThen(() => undefined),
      { timeoutMs: 300 },
    );
    const started = Date.now();
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }));
    expect(error).toBeInstanceOf(OATimeoutError);
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error.deliveryUnknown).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(hits('/webhook/broadcast-message')).toBe(1);
  });

  it('a per-call timeoutMs overrides the client one', async () => {
    const { client } = await setup(
      tokensThen(() => undefined),
      { timeoutMs: 60_000 },
    );
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'x' }, { timeoutMs: 200 }));
    expect(error).toBeInstanceOf(OATimeoutError);
    expect(error.message).toContain('200 ms');
  });

  it('an abort rejects at once with OAAbortError carrying the reason', async () => {
    const { client } = await setup(tokensThen(() => undefined));
    const controller = new AbortController();
    const pending = rejection(client.sendText({ user_id: 'u1', msg: 'x' }, { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('user gave up')), 100);
    const error = await pending;
    expect(error).toBeInstanceOf(OAAbortError);
    expect((error.cause as Error).message).toBe('user gave up');
    expect(error.deliveryUnknown).toBe(true);
  });

  it('an already aborted signal sends nothing', async () => {
    const { client } = await setup(tokensThen((_req, res) => json(res, 200, { data: 'success' })));
    const error = await rejection(
      client.sendText({ user_id: 'u1', msg: 'x' }, { signal: AbortSignal.abort() }),
    );
    expect(error).toBeInstanceOf(OAAbortError);
    expect(hits('/webhook/broadcast-message')).toBe(0);
  });
});

describe('a connection that cannot be made', () => {
  it('is not a delivery risk: retried, then OAConnectionError with deliveryUnknown false', async () => {
    const port = await freePort();
    const client = new OAClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: 'k-123456',
      apiSecret: 's-123456',
      maxRetries: 1,
    });
    const error = await rejection(client.generateToken());
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error.deliveryUnknown).toBe(false);
    expect(error.message).toContain('ECONNREFUSED');
    await client.close();
  });
});

describe('sockets and timers', () => {
  it('keeps the connection alive between calls', async () => {
    const ports = new Set<number>();
    const { client } = await setup(
      tokensThen((req, res) => {
        ports.add(req.socket.remotePort ?? 0);
        json(res, 201, { data: 'success' });
      }),
    );
    for (let i = 0; i < 10; i++) await client.sendText({ user_id: 'u1', msg: `m${i}` });
    // Without keep-alive each of the 10 sequential calls would open its own connection.
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('calls after close() reject without sending', async () => {
    const { client } = await setup(tokensThen((_req, res) => json(res, 201, { data: 'success' })));
    await client.sendText({ user_id: 'u1', msg: 'x' });
    await client.close();
    const error = await rejection(client.sendText({ user_id: 'u1', msg: 'y' }));
    expect(error).toBeInstanceOf(OAConnectionError);
    expect(error.deliveryUnknown).toBe(false);
    expect(hits('/webhook/broadcast-message')).toBe(1);
  });

  it('a script that makes one call exits on its own, and close() releases everything at once', async () => {
    const { server } = await setup(
      tokensThen((_req, res) => json(res, 201, { data: 'success' })),
      {},
    );
    const script = fileURLToPath(new URL('../helpers/one-call.ts', import.meta.url));
    for (const mode of ['end', 'close']) {
      const child = spawn(process.execPath, ['--import', 'tsx', script, server.url, mode], { stdio: 'pipe' });
      let out = '';
      // From the call's answer on: the child's own start (tsx) is not what is measured.
      let answeredAt = Number.NaN;
      child.stdout.on('data', (d) => {
        out += d;
        if (Number.isNaN(answeredAt) && out.includes('success')) answeredAt = Date.now();
      });
      child.stderr.on('data', (d) => {
        out += d;
      });
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(out).toContain('success');
      expect(code).toBe(0);
      // The server keeps connections alive for 5 s; the child must not wait for that.
      expect(Date.now() - answeredAt).toBeLessThan(4000);
    }
  });
});
