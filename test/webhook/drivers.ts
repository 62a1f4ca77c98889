/**
 * Each webhook handler behind one small interface, so a test runs through each: the node handler over
 * a real node:http server on loopback, the fetch handler with `Request` objects, and the fetch handler
 * served by @hono/node-server on loopback, with the `Request` that adapter makes from Node's request.
 */
import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect } from 'vitest';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  type WebhookHandlerOptions,
} from '../../src/webhook/index.js';
import { listen, serveFetch } from './support.js';

export type Body = string | Uint8Array | ReadableStream<Uint8Array> | undefined;
export interface Answer {
  status: number;
  allow: string | null;
  json: Record<string, unknown>;
}
export interface Driver {
  send(method: string, body?: Body, headers?: Record<string, string>): Promise<Answer>;
  close(): Promise<void>;
}
export type Options = WebhookHandlerOptions<IncomingMessage> & WebhookHandlerOptions<Request>;

const toAnswer = async (response: Response): Promise<Answer> => ({
  status: response.status,
  allow: response.headers.get('allow'),
  json: (await response.json()) as Record<string, unknown>,
});

const init = (method: string, body: Body, headers: Record<string, string>): RequestInit =>
  // duplex is required by fetch for a stream body.
  ({
    method,
    body: body ?? null,
    headers: { 'content-type': 'application/json', ...headers },
    duplex: 'half',
  }) as RequestInit;

/** A driver that posts to a server on loopback. */
const overHttp = (server: { url: string; close(): Promise<void> }): Driver => ({
  send: async (method, body, headers = {}) =>
    toAnswer(await fetch(`${server.url}/hook`, init(method, body, headers))),
  close: server.close,
});

export const drivers: Record<string, (options: Options) => Promise<Driver>> = {
  'node handler over node:http': async (options) => overHttp(await listen(createWebhookHandler(options))),
  'fetch handler': async (options) => {
    const handler = createFetchWebhookHandler(options);
    return {
      send: async (method, body, headers = {}) =>
        toAnswer(await handler(new Request('http://x/hook', init(method, body, headers)))),
      close: async () => undefined,
    };
  },
  'fetch handler on @hono/node-server': async (options) =>
    overHttp(await serveFetch(createFetchWebhookHandler(options))),
};

/**
 * Defines the same tests once per handler, each set in a describe block named after it. The drivers a
 * test starts are closed after it, and then `unhandled` (see `trackUnhandledRejections`) must be empty.
 */
export function eachDriver(
  unhandled: unknown[],
  define: (start: (options: Options) => Promise<Driver>) => void,
) {
  describe.each(Object.entries(drivers))('%s', (_name, startDriver) => {
    let open: Driver[] = [];
    afterEach(async () => {
      await Promise.all(open.map((driver) => driver.close()));
      open = [];
      expect(unhandled).toEqual([]);
    });
    define(async (options) => {
      const driver = await startDriver(options);
      open.push(driver);
      return driver;
    });
  });
}
