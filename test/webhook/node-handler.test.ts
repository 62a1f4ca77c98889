/** What only the node handler does: bodies left by earlier middleware, clients that hang up. */
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { text } from 'node:stream/consumers';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createWebhookHandler, type WebhookHandlerOptions } from '../../src/webhook/index.js';
import { listen, post, recordingLogger, textEvent } from './support.js';

type Req = IncomingMessage & { body?: unknown };
let closeServer: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeServer?.();
  closeServer = undefined;
});

/** Serves the handler behind `before`, a stand-in for a body parser. */
async function serve(options: WebhookHandlerOptions<Req>, before?: (req: Req) => Promise<void>) {
  const handler = createWebhookHandler(options);
  const server = await listen(async (req: Req, res: ServerResponse) => {
    await before?.(req);
    await handler(req, res);
  });
  closeServer = server.close;
  return server.url;
}

describe('createWebhookHandler with a body parser in front', () => {
  const parsers: [string, (raw: string) => unknown, boolean][] = [
    ['an object', (raw) => JSON.parse(raw), false],
    ['a string', (raw) => raw, true],
    ['a Buffer', (raw) => Buffer.from(raw), true],
  ];

  it.each(parsers)('reads req.body when it is %s', async (_label, toBody, rawAvailable) => {
    const onEvent = vi.fn();
    const rawSeen: (Uint8Array | undefined)[] = [];
    const verify = (_req: Req, raw: Uint8Array | undefined) => {
      rawSeen.push(raw);
      return true;
    };
    const url = await serve({ onEvent, verify }, async (req) => {
      req.body = toBody(await text(req));
    });
    expect((await post(url, textEvent('parsed'))).status).toBe(200);
    expect(onEvent.mock.calls[0]?.[0].data.MsgBody[0].MsgContent.Text).toBe('parsed');
    expect(rawSeen[0] === undefined).toBe(!rawAvailable);
  });

  it('reads the stream when req.body is set but the stream was left unread (Express 4 body-parser)', async () => {
    const onEvent = vi.fn();
    const url = await serve({ onEvent }, async (req) => {
      req.body = {};
    });
    expect((await post(url, textEvent('from the stream'))).status).toBe(200);
    expect(onEvent).toHaveBeenCalledOnce();
  });

  it('answers 500 (and logs) when the stream was consumed and nothing was left in req.body', async () => {
    const { lines, logger } = recordingLogger();
    const url = await serve({ onEvent: vi.fn(), logger }, async (req) => {
      await text(req);
    });
    expect((await post(url, textEvent('lost'))).status).toBe(500);
    expect(lines.some((line) => line.level === 'error' && /req\.body is not set/.test(line.message))).toBe(
      true,
    );
  });

  it('applies maxBodyBytes to a raw body a parser already read', async () => {
    const url = await serve({ onEvent: vi.fn(), maxBodyBytes: 100 }, async (req) => {
      req.body = Buffer.from(await text(req));
    });
    // Chunked, so the Content-Length check cannot catch it first.
    const response = await fetch(url, {
      method: 'POST',
      body: new Blob([JSON.stringify({ ...textEvent('x'), pad: 'x'.repeat(500) })]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
  });
});

describe('createWebhookHandler and the socket', () => {
  it('survives a client that hangs up mid-body, without logging an error', async () => {
    const { lines, logger } = recordingLogger();
    const onEvent = vi.fn();
    const url = new URL(await serve({ onEvent, logger }));
    await new Promise<void>((resolve) => {
      const req = httpRequest({
        host: url.hostname,
        port: url.port,
        method: 'POST',
        headers: { 'content-length': 5000 },
      });
      req.on('error', () => resolve());
      req.write('{"event_type":"mess', () => setTimeout(() => req.destroy(), 50));
      req.on('close', () => resolve());
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await post(url.href, textEvent('still up'))).status).toBe(200);
    expect(onEvent).toHaveBeenCalledOnce();
    expect(lines.filter((line) => line.level === 'error')).toEqual([]);
    expect(lines.some((line) => line.level === 'debug' && /closed the request/.test(line.message))).toBe(
      true,
    );
  });

  it('closes the connection after a 413 instead of draining the rest of the body', async () => {
    const url = await serve({ onEvent: vi.fn(), maxBodyBytes: 100 });
    const answer = await post(url, { ...textEvent('x'), pad: 'x'.repeat(500) });
    expect(answer.status).toBe(413);
    expect(answer.headers.get('connection')).toBe('close');
    expect(answer.json).toEqual({ error: 'Body larger than 100 bytes' });
  });

  it('answers on its own and ignores next (Express signature)', async () => {
    const next = vi.fn();
    const handler = createWebhookHandler({ onEvent: vi.fn() });
    const server = await listen((req, res) => handler(req, res, next));
    closeServer = server.close;
    expect((await post(server.url, textEvent('x'))).status).toBe(200);
    expect(next).not.toHaveBeenCalled();
  });
});
