import type { IncomingMessage, ServerResponse } from 'node:http';
import { listen } from './listen.js';

export type RawHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

export interface RawServer {
  url: string;
  /** Every request received: path, JSON body and arrival time (`performance.now()`). */
  hits: { path: string; body: unknown; authorization: string | undefined; at: number }[];
  close(): Promise<void>;
}

/**
 * A plain node:http server on 127.0.0.1 for the cases that need sockets: a reset after the request
 * was processed, an answer that never comes.
 */
export async function startRawServer(handler: RawHandler): Promise<RawServer> {
  const hits: RawServer['hits'] = [];
  const { url, close } = await listen(async (req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
    hits.push({
      path: new URL(req.url ?? '/', 'http://x').pathname,
      body,
      authorization: req.headers.authorization,
      at,
    });
    await handler(req, res, text);
  });
  return { url, hits, close };
}

/** Answers `{ data }` as JSON with `status`. */
export function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}
