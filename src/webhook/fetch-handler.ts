import { createWebhookCore, type WebhookHandlerOptions, type WebhookResult } from './core.js';
import { contentCoding, decodeWithStreams, readCapped, TOO_LARGE } from './encoding.js';

/** A well-formed Content-Length (one the precheck has compared with the limit). */
const DIGITS = /^\d+$/;

/** A webhook endpoint for runtimes built on `Request`/`Response` (Hono, Next.js route handlers, Bun, Deno). */
export type FetchWebhookHandler = (request: Request) => Promise<Response>;

/**
 * Creates a webhook endpoint for `Request`/`Response` runtimes, with the same behaviour as
 * {@link createWebhookHandler}: 405 (with `Allow: POST`), 413 over `maxBodyBytes`, 415 for a
 * `Content-Encoding` other than gzip, deflate or br, 401 when `verify`
 * refuses (it gets the `Request` and the raw bytes), 400 malformed, 500 when `onEvent` throws, 200
 * otherwise. Pass the request unread (in Hono, `c.req.raw` before any `c.req.json()`).
 *
 * The OA API does not sign its webhook requests: use an unguessable path, an IP allow-list (at your
 * proxy, or in `verify` from a header it sets), and/or `verify`.
 *
 * @example
 * ```ts
 * const handler = createFetchWebhookHandler({ onEvent: (event) => console.log(getMessageText(event)) });
 * app.all('/oa/webhook/3f9c...', (c) => handler(c.req.raw)); // Hono
 * export const POST = handler;                             // Next.js app/.../route.ts
 * ```
 */
export function createFetchWebhookHandler(options: WebhookHandlerOptions<Request>): FetchWebhookHandler {
  const core = createWebhookCore(options);

  async function respond(request: Request): Promise<WebhookResult> {
    const early = core.precheck(request.method, request.headers.get('content-length'));
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
    const declared = request.headers.get('content-length');
    const sent =
      declared !== null && DIGITS.test(declared)
        ? new Uint8Array(await request.arrayBuffer())
        : request.body === null
          ? new Uint8Array(0)
          : await readCapped(request.body, core.maxBodyBytes);
    if (sent === TOO_LARGE || sent.byteLength > core.maxBodyBytes) return core.tooLarge();
    const raw = await core.decode(sent, coding, decodeWithStreams);
    if (!(raw instanceof Uint8Array)) return raw;
    return core.handle(request, { raw });
  }

  return async (request) => {
    let result: WebhookResult;
    try {
      result = await respond(request);
    } catch (error) {
      result = core.failed('reading the request failed', error);
    }
    return new Response(JSON.stringify(result.body), { status: result.status, headers: result.headers });
  };
}
