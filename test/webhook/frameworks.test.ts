/** The handlers mounted in real Express, Fastify and Hono apps on loopback. */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createFetchWebhookHandler, createWebhookHandler } from '../../src/webhook/index.js';
import { asMessage, expectScenario, listen, post, scenarioOptions, textEvent } from './support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('Express', () => {
  it('without a body parser: the handler reads the stream', async () => {
    const { received, options } = scenarioOptions();
    const app = express();
    app.all('/oa/webhook', createWebhookHandler<express.Request>(options));
    const server = await listen(app);
    cleanups.push(server.close);
    await expectScenario(`${server.url}/oa/webhook`, received);
  });

  it('after express.json(): the handler uses req.body', async () => {
    const { received, options } = scenarioOptions();
    const rawSeen: (Uint8Array | undefined)[] = [];
    const app = express();
    app.use(express.json());
    app.all(
      '/oa/webhook',
      createWebhookHandler<express.Request>({
        ...options,
        verify: (req, raw) => {
          rawSeen.push(raw);
          return options.verify(req);
        },
      }),
    );
    const server = await listen(app);
    cleanups.push(server.close);
    // 400 for malformed JSON then comes from express.json() itself; the statuses are the same.
    await expectScenario(`${server.url}/oa/webhook`, received);
    expect(rawSeen[0]).toBeUndefined(); // express.json() kept no raw bytes
  });

  it('mounts with app.post(path, handler)', async () => {
    const { received, options } = scenarioOptions();
    const app = express();
    app.post('/hook', createWebhookHandler(options));
    const server = await listen(app);
    cleanups.push(server.close);
    expect((await post(`${server.url}/hook`, textEvent('posted'))).status).toBe(200);
    expect(received).toHaveLength(1);
  });
});

describe('Fastify', () => {
  it('with its parsed body: request.raw plus request.body, reply hijacked', async () => {
    const { received, options } = scenarioOptions();
    const handler = createWebhookHandler(options);
    const app = Fastify();
    app.all('/oa/webhook', async (request, reply) => {
      reply.hijack();
      await handler(Object.assign(request.raw, { body: request.body }), reply.raw);
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => app.close());
    const { port } = app.server.address() as AddressInfo;
    await expectScenario(`http://127.0.0.1:${port}/oa/webhook`, received);
  });

  it('with the raw stream: a pass-through content-type parser in an encapsulated scope', async () => {
    const { received, options } = scenarioOptions();
    const rawSeen: string[] = [];
    const handler = createWebhookHandler({
      ...options,
      verify: (req, raw) => {
        rawSeen.push(new TextDecoder().decode(raw));
        return options.verify(req);
      },
    });
    const app = Fastify();
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
      scope.all('/oa/webhook', async (request, reply) => {
        reply.hijack();
        await handler(request.raw, reply.raw);
      });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => app.close());
    const { port } = app.server.address() as AddressInfo;
    await expectScenario(`http://127.0.0.1:${port}/oa/webhook`, received);
    expect(rawSeen[0]).toBe(JSON.stringify(textEvent('hello from a framework')));
  });
});

describe('Hono', () => {
  const honoApp = (options: ReturnType<typeof scenarioOptions>['options']) => {
    const handler = createFetchWebhookHandler(options);
    const app = new Hono();
    app.all('/oa/webhook', (c) => handler(c.req.raw));
    return app;
  };

  it('served by @hono/node-server', async () => {
    const { received, options } = scenarioOptions();
    const app = honoApp(options);
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
    });
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    await expectScenario(`http://127.0.0.1:${port}/oa/webhook`, received);
  });

  it('through app.request, with no server', async () => {
    const { received, options } = scenarioOptions();
    const app = honoApp(options);
    const response = await app.request('/oa/webhook', {
      method: 'POST',
      body: JSON.stringify(textEvent('hi')),
    });
    expect(response.status).toBe(200);
    expect((await app.request('/oa/webhook')).status).toBe(405);
    expect(asMessage(received[0]).data.From_Account).toBe('user_42');
  });
});
