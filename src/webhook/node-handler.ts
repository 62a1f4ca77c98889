import type { IncomingMessage, ServerResponse } from 'node:http';
import { decodeWithZlib } from '#webhook-runtime';
import {
  createWebhookCore,
  type WebhookBody,
  type WebhookHandlerClose,
  type WebhookHandlerOptions,
  type WebhookResult,
} from './core.js';
import { contentCoding, TOO_LARGE } from './encoding.js';

/**
 * A request handler for node:http, Express and Connect. It always answers itself and never rejects, so
 * it is safe as a plain `server.on('request', handler)`; `next` is accepted for Express's signature and
 * never called. `handler.close()` drains it on shutdown.
 */
export type NodeWebhookHandler<Req extends IncomingMessage = IncomingMessage> = ((
  req: Req,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => Promise<void>) &
  WebhookHandlerClose;

/** Reads the stream with a limit. Listeners, not `for await`: breaking that loop would destroy the socket. */
function readBody(req: IncomingMessage, limit: number): Promise<Uint8Array | typeof TOO_LARGE> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += bytes.length;
      if (total > limit) {
        cleanup();
        // Discard the rest instead of buffering it; the 413 closes the connection.
        req.resume();
        resolve(TOO_LARGE);
        return;
      }
      chunks.push(bytes);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, total));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    const onClose = () => {
      cleanup();
      reject(new Error('the request was closed before its body was read'));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/**
 * The body as some earlier middleware left it. A parser that read the stream leaves it ended; a stream
 * still unread is read by us even if `req.body` is set (Express 4's body-parser sets `{}` for content
 * types it skips without reading).
 */
function bodyFromParser(req: IncomingMessage & { body?: unknown }): WebhookBody | 'unread' | 'lost' {
  if (!req.readableEnded) return 'unread';
  const { body } = req;
  if (body === undefined) return 'lost';
  if (typeof body === 'string') return { raw: Buffer.from(body, 'utf8') };
  if (body instanceof Uint8Array) return { raw: body };
  return { parsed: body };
}

/** An answer as node:http writes it: its body and headers, made once for each answer the core shares. */
interface Written {
  payload: string;
  headers: Record<string, string | number>;
}
const written = new WeakMap<WebhookResult, Written>();

function writtenOf(result: WebhookResult): Written {
  let out = written.get(result);
  if (out === undefined) {
    const payload = JSON.stringify(result.body);
    out = { payload, headers: { ...result.headers, 'content-length': Buffer.byteLength(payload) } };
    written.set(result, out);
  }
  return out;
}

function send(req: IncomingMessage, res: ServerResponse, result: WebhookResult): void {
  if (res.headersSent || res.writableEnded || res.destroyed) return;
  const { payload, headers } = writtenOf(result);
  // After a 413 the rest of the body is not worth reading: close instead of draining it. HTTP/1 only:
  // HTTP/2 forbids the header (and resets the stream on its own).
  if (result.status === 413 && req.httpVersionMajor === 1) {
    res.writeHead(result.status, { ...headers, connection: 'close' });
  } else res.writeHead(result.status, headers);
  res.end(payload);
}

/**
 * Creates a webhook endpoint for node:http, Express and Connect. It answers 405 (with `Allow: POST`) to
 * other methods, 413 to bodies over `maxBodyBytes` (also once decoded: `Content-Encoding` gzip, deflate
 * and br are read), 415 to another `Content-Encoding`, 401 when `verify` refuses, 400 to malformed events,
 * 500 when `onEvent` throws, and 200 otherwise, each with a small JSON body (`{"ok":true}` /
 * `{"error":"..."}`).
 *
 * It works with or without a body parser in front: `req.body` may be an object, a string or a Buffer, or
 * the stream may be unread. (To give `verify` the raw bytes behind `express.json()`, mount the handler
 * before it, or use `express.raw({ type: '*\/*' })` for this route.)
 *
 * The OA API does not sign its webhook requests: anyone who learns the URL can post to it. Use an
 * unguessable path (a long random segment), allow only the OA service's addresses if you know them,
 * and/or check what you can in `verify`.
 *
 * @example
 * ```ts
 * const handler = createWebhookHandler({
 *   onEvent: (event) => console.log(event.data.From_Account, getMessageText(event)),
 *   dedupe: true,
 * });
 * http.createServer(handler).listen(3000);   // node:http
 * app.post('/oa/webhook/3f9c...', handler);   // Express (app.all also answers 405 to other methods)
 * process.once('SIGTERM', async () => { await handler.close(); server.close(); });
 * ```
 *
 * With a `store` and `waitUntil: true`, it answers 200 once the event is stored and runs `onEvent`
 * after the answer, which `handler.close()` waits for.
 */
export function createWebhookHandler<Req extends IncomingMessage = IncomingMessage>(
  options: WebhookHandlerOptions<Req>,
): NodeWebhookHandler<Req> {
  const core = createWebhookCore(options, (req) => req.url ?? '');

  async function respond(req: Req): Promise<WebhookResult> {
    const early = core.precheck(req.method, req.headers['content-length']);
    if (early) {
      // Discard the unread body so the connection can be reused (or closed after a 413).
      req.resume();
      return early;
    }
    let body = bodyFromParser(req);
    if (body === 'lost') {
      return core.failed('the request body was read by other middleware and req.body is not set', undefined);
    }
    if (body === 'unread') {
      // Only a body we read ourselves: a body parser in front already decoded what it read.
      const coding = contentCoding(req.headers['content-encoding']);
      if (typeof coding === 'object') {
        req.resume();
        return core.unsupportedEncoding(coding.unsupported);
      }
      // The body as sent is held within the limit too, then decoded within it.
      const sent = await readBody(req, core.maxBodyBytes);
      if (sent === TOO_LARGE) return core.tooLarge();
      if (coding === undefined) body = { raw: sent };
      else {
        const raw = await core.decode(sent, coding, decodeWithZlib);
        if (!(raw instanceof Uint8Array)) return raw;
        body = { raw };
      }
    }
    return core.handle(req, body);
  }

  const handler = async (req: Req, res: ServerResponse) => {
    let result: WebhookResult;
    core.begin();
    try {
      try {
        result = await respond(req);
      } catch (error) {
        // A client that hangs up mid-body is routine, not a server failure, and there is no one to answer.
        if (req.destroyed) {
          core.log.debug?.('oa-messaging webhook: the client closed the request before its body was read');
          return;
        }
        result = core.failed('reading the request failed', error);
      }
      send(req, res, result);
    } finally {
      core.end();
    }
  };
  return Object.assign(handler, { close: core.close });
}
