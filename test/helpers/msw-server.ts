import type { IncomingMessage } from 'node:http';
import { getResponse, type RequestHandler } from 'msw';
import { listen } from './listen.js';

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  bodyText: string;
  /** The parsed JSON body, or undefined when it was not JSON. */
  body: unknown;
}

export interface MswServer {
  url: string;
  requests: RecordedRequest[];
  /** Puts handlers in front of the initial ones, until `reset()`. */
  use(...handlers: RequestHandler[]): void;
  reset(): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * A real HTTP server on 127.0.0.1 whose answers come from msw handlers. The SDK talks to it over a
 * socket exactly as to the API (msw's interceptors do not see undici's own `request`).
 */
export async function startMswServer(...initial: RequestHandler[]): Promise<MswServer> {
  let extra: RequestHandler[] = [];
  const requests: RecordedRequest[] = [];
  const { url, close } = await listen(async (req, res) => {
    const raw = await readBody(req);
    const bodyText = raw.toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      body = undefined;
    }
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, bodyText, body });
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (typeof v === 'string') headers.set(k, v);
    }
    const request = new Request(url, {
      method: req.method ?? 'GET',
      headers,
      ...(raw.length > 0 ? { body: new Uint8Array(raw) } : {}),
    });
    const response = await getResponse([...extra, ...initial], request);
    if (!response) {
      res
        .writeHead(599, { 'content-type': 'text/plain' })
        .end(`no handler for ${req.method} ${url.pathname}`);
      return;
    }
    const out: Record<string, string> = {};
    response.headers.forEach((value, key) => {
      out[key] = value;
    });
    res.writeHead(response.status, out);
    res.end(Buffer.from(await response.arrayBuffer()));
  });
  return {
    url,
    requests,
    use: (...handlers) => {
      extra = [...handlers, ...extra];
    },
    reset: () => {
      extra = [];
      requests.length = 0;
    },
    close,
  };
}
