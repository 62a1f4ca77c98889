/**
 * `oa-messaging/testing/msw`: the fake OA API as msw 2 request handlers, for tests that intercept
 * `fetch` instead of opening a port. msw is an optional peer dependency: only this module imports it.
 *
 * @example
 * ```ts
 * import { setupServer } from 'msw/node';
 * import { createFakeOA } from 'oa-messaging/testing';
 * import { createMswHandlers } from 'oa-messaging/testing/msw';
 * const fake = createFakeOA();
 * const server = setupServer(...createMswHandlers(fake, { baseUrl: 'https://oa.test' }));
 * server.listen();
 * ```
 *
 * @module oa-messaging/testing/msw
 */
import { type HttpHandler, HttpResponse, http } from 'msw';
import type { FakeOA } from './fake.js';

/** Options of {@link createMswHandlers}. */
export interface MswHandlersOptions {
  /** The base URL the code under test calls (the SDK's `baseUrl`); may carry a path prefix. */
  baseUrl: string;
}

/**
 * msw handlers that answer every request under `baseUrl` from `fake`. Uploaded files get URLs under
 * `baseUrl` (unless the fake has a `publicUrl`), served by the same handlers. Faults map to msw's terms:
 * a reset is `HttpResponse.error()` (a network error), a hang never answers until the fake is reset.
 */
export function createMswHandlers(fake: FakeOA, options: MswHandlersOptions): HttpHandler[] {
  const base = new URL(options.baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const root = `${base.origin}${prefix}`;
  for (const account of fake.accounts) account.publicUrl ??= root;
  return [
    http.all(`${root}/*`, async ({ request }) => {
      const url = new URL(request.url);
      const outcome = await fake.handle({
        method: request.method,
        url: `${url.pathname.slice(prefix.length)}${url.search}`,
        headers: request.headers,
        body: new Uint8Array(await request.arrayBuffer()),
      });
      if (outcome.type === 'respond') {
        return new HttpResponse(outcome.body, { status: outcome.status, headers: outcome.headers });
      }
      if (outcome.type === 'hang') await outcome.released;
      return HttpResponse.error();
    }),
  ];
}
