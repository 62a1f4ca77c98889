import { decodeWithZlib } from '#webhook-runtime';
import {
  createWebhookCore,
  type WaitUntil,
  type WebhookHandlerClose,
  type WebhookHandlerOptions,
  type WebhookResult,
} from './core.js';
import { contentCoding, type Decoder, decodeWithStreams, readCapped, TOO_LARGE } from './encoding.js';

/**
 * gzip and deflate through `DecompressionStream`; br, or a runtime without it, through the runtime's
 * `node:zlib` decoder (none off Node).
 */
const decodeBody: Decoder = (bytes, coding, limit) => decodeWithStreams(bytes, coding, limit, decodeWithZlib);

/** A well-formed Content-Length (one the precheck has compared with the limit). */
const DIGITS = /^\d+$/;

/**
 * What a serverless platform hands its request handlers for work that outlives the answer: a Worker's
 * `ctx` (`ExecutionContext`), Hono's `c.executionCtx` on Workers, the `context` of Vercel's and
 * Netlify's edge functions, or `{ waitUntil }` built from `@vercel/functions` or Next.js's `after`.
 */
export interface WebhookPlatformContext {
  /** Keeps `promise` running after the answer; called as a method, so a Worker's `ctx` needs no `bind`. */
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * A webhook endpoint for runtimes built on `Request`/`Response` (Hono, Next.js route handlers, Bun,
 * Deno, Cloudflare Workers). `platform`, when it has a `waitUntil` method, is the request's own way to
 * keep work going after the answer (it wins over the `waitUntil` option). Any other second argument
 * (Bun's server, Deno's connection info, a Worker's `env`, `@hono/node-server`'s bindings) is ignored,
 * so the handler may still be given as it is to a runtime that calls it with one. `handler.close()`
 * drains it when a long-running server shuts down.
 */
export type FetchWebhookHandler = ((
  request: Request,
  platform?: WebhookPlatformContext | object | undefined,
) => Promise<Response>) &
  WebhookHandlerClose;

/** The platform's `waitUntil`, called on its object, or `undefined` when it has none. */
function waitUntilOf(platform: unknown): WaitUntil | undefined {
  if (typeof platform !== 'object' || platform === null) return undefined;
  const context = platform as Partial<WebhookPlatformContext>;
  if (typeof context.waitUntil !== 'function') return undefined;
  return (promise) => context.waitUntil?.(promise);
}

/**
 * Creates a webhook endpoint for `Request`/`Response` runtimes, with the same behaviour as
 * {@link createWebhookHandler}: 405 (with `Allow: POST`), 413 over `maxBodyBytes`, 415 for a
 * `Content-Encoding` other than gzip, deflate or br, 401 when `verify`
 * refuses (it gets the `Request` and the raw bytes), 400 malformed, 500 when `onEvent` throws, 200
 * otherwise. Pass the request unread (in Hono, `c.req.raw` before any `c.req.json()`).
 *
 * On a platform with a deadline, pass its context with the request (`handler(request, ctx)` in a
 * Worker) and give a `store`: the answer is 200 as soon as the event is stored, and `onEvent` runs in
 * the platform's `waitUntil`. Without `store`, the answer waits for `onEvent` as above, and
 * `context.waitUntil` lets `onEvent` hand its slow part to the platform. On a long-running server
 * (Bun, Deno, Node) `waitUntil: true` answers first the same way, the handler keeping the work
 * itself, and `handler.close()` drains it on shutdown.
 *
 * The OA API does not sign its webhook requests: use an unguessable path, an IP allow-list (at your
 * proxy, or in `verify` from a header it sets), and/or `verify`.
 *
 * @example
 * ```ts
 * const handler = createFetchWebhookHandler({ onEvent: (event) => console.log(getMessageText(event)) });
 * app.all('/oa/webhook/3f9c...', (c) => handler(c.req.raw)); // Hono
 * export const POST = handler;                             // Next.js app/.../route.ts
 * export default { fetch: (request, env, ctx) => handler(request, ctx) }; // a Cloudflare Worker
 * ```
 */
export function createFetchWebhookHandler(options: WebhookHandlerOptions<Request>): FetchWebhookHandler {
  const core = createWebhookCore(options, (request) => request.url);

  async function respond(request: Request, platform: unknown): Promise<WebhookResult> {
    const declared = request.headers.get('content-length');
    const early = core.precheck(request.method, declared);
    if (early) return early;
    if (request.bodyUsed)
      return core.failed('the request body was already read before the handler', undefined);
    const coding = contentCoding(request.headers.get('content-encoding'));
    if (typeof coding === 'object') {
      await request.body?.cancel().catch(() => undefined);
      return core.unsupportedEncoding(coding.unsupported);
    }
    // The body as sent is held within the limit too, then decoded within it. With a Content-Length
    // (already checked against the limit) it is read whole with arrayBuffer(): adapters such as
    // @hono/node-server answer that from the socket, while touching `request.body` makes them build
    // a web stream and an abort signal first. Without one, it is streamed and counted as it comes.
    const sent =
      declared !== null && DIGITS.test(declared)
        ? new Uint8Array(await request.arrayBuffer())
        : request.body === null
          ? new Uint8Array(0)
          : await readCapped(request.body, core.maxBodyBytes);
    if (sent === TOO_LARGE || sent.byteLength > core.maxBodyBytes) return core.tooLarge();
    if (coding === undefined) return core.handle(request, { raw: sent }, waitUntilOf(platform));
    const raw = await core.decode(sent, coding, decodeBody);
    if (!(raw instanceof Uint8Array)) return raw;
    return core.handle(request, { raw }, waitUntilOf(platform));
  }

  const handler = (request: Request, platform?: unknown) => {
    core.begin();
    return respond(request, platform)
      .then(toResponse, (error: unknown) => toResponse(core.failed('reading the request failed', error)))
      .finally(core.end);
  };
  return Object.assign(handler, { close: core.close });
}

function toResponse(result: WebhookResult): Response {
  // A copy of the headers: a runtime or adapter may keep the object it is given.
  return new Response(JSON.stringify(result.body), { status: result.status, headers: { ...result.headers } });
}
