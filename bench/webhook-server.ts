// One receiver of bench/webhook-throughput.bench.ts, in a process of its own: the built SDK's node or fetch
// handler (parsing, validation and in-memory dedupe on), or the raw baseline of the same runtime, which
// reads the body, JSON.parses it and answers the same status, headers and body. Prints its URL; ends
// when its stdin closes.
import { createServer } from 'node:http';
import { serve } from '@hono/node-server';

// The built package, as an application runs it (webhook-throughput.bench.ts builds it first).
const { createFetchWebhookHandler, createWebhookHandler } = (await import(
  new URL('../dist/webhook/index.js', import.meta.url).href
)) as typeof import('../src/webhook/index.js');

const kind = process.argv[2];
const OK = '{"ok":true}';
const HEADERS = { 'content-type': 'application/json; charset=utf-8' };
let events = 0;
const onEvent = () => {
  events += 1;
};

function listen(server: import('node:http').Server) {
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address && typeof address === 'object') process.stdout.write(`http://127.0.0.1:${address.port}/\n`);
  });
  process.stdin.on('end', () => {
    server.closeAllConnections();
    server.close();
  });
  process.stdin.resume();
}

if (kind === 'sdk-node') {
  listen(createServer(createWebhookHandler({ onEvent, dedupe: true })));
} else if (kind === 'raw-node') {
  listen(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        JSON.parse(Buffer.concat(chunks).toString('utf8'));
        onEvent();
        res.writeHead(200, { ...HEADERS, 'content-length': OK.length });
        res.end(OK);
      });
    }),
  );
} else if (kind === 'sdk-fetch' || kind === 'raw-fetch') {
  const sdk = createFetchWebhookHandler({ onEvent, dedupe: true });
  const raw = async (request: Request) => {
    await request.json();
    onEvent();
    return new Response(OK, { status: 200, headers: HEADERS });
  };
  const server = serve({ fetch: kind === 'sdk-fetch' ? sdk : raw, hostname: '127.0.0.1', port: 0 }, (info) =>
    process.stdout.write(`http://127.0.0.1:${info.port}/\n`),
  );
  process.stdin.on('end', () => server.close());
  process.stdin.resume();
} else {
  throw new Error(`unknown receiver ${kind}`);
}
process.on('exit', () => {
  if (events === 0) process.exitCode = 1;
});
