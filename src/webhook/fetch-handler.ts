import { createWebhookCore, TOO_LARGE, type WebhookHandlerOptions, type WebhookResult } from './core.js';

/** A webhook endpoint for runtimes built on `Request`/`Response` (Hono, Next.js route handlers, Bun, Deno). */
export type FetchWebhookHandler = (request: Request) => Promise<Response>;

/** Reads the body stream with a limit, cancelling it as soon as the limit is passed. */
async function readBody(request: Request, limit: number): Promise<Uint8Array | typeof TOO_LARGE> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return TOO_LARGE;
    }
    chunks.push(value);
  }
  // No Buffer here: edge runtimes have none.
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * Creates a webhook endpoint for `Request`/`Response` runtimes, with the same behaviour as
 * {@link createWebhookHandler}: 405 (with `Allow: POST`), 413 over `maxBodyBytes`, 401 when `verify`
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
    const raw = await readBody(request, core.maxBodyBytes);
    if (raw === TOO_LARGE) return core.tooLarge();
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
