// One receiver of bench/webhook-throughput.bench.ts, in a process of its own: the built SDK's node or fetch
// handler (parsing, validation and in-memory dedupe on); the raw baseline of the same runtime, which
// reads the body, JSON.parses it and answers the same status, headers and body; or the handler's work
// done by hand (`by-hand-*`): the body read, parsed by `parseWebhookEvent`, claimed and completed in a
// `MemoryDedupeStore`, answered 200, and nothing else (no method, size or encoding checks, no error
// answers). Prints its URL; ends when its stdin closes.
import { createServer } from 'node:http';
import { serve } from '@hono/node-server';

// The built package, as an application runs it (webhook-throughput.bench.ts builds it first).
const { createFetchWebhookHandler, createWebhookHandler, MemoryDedupeStore, parseWebhookEvent } =
  (await import(
    new URL('../dist/webhook/index.js', import.meta.url).href
  )) as typeof import('../src/webhook/index.js');

const kind = process.argv[2];
const OK = '{"ok":true}';
const HEADERS = { 'content-type': 'application/json; charset=utf-8' };
let events = 0;
const onEvent = () => {
  events += 1;
};

// The by-hand receivers' deduplication: the SDK's store, under the key `dedupeKeyOf` (src/webhook/dedupe.ts)
// gives a message event with a MsgKey, without the handler around them.
const store = new MemoryDedupeStore();
let deliveries = 0;
function deliverOnce(body: Uint8Array): void {
  const event = parseWebhookEvent(body);
  const data = event.data as Record<string, unknown>;
  const key = JSON.stringify([
    event.username ?? '',
    data.CallbackCommand ?? '',
    data.GroupId ?? '',
    data.From_Account ?? '',
    data.To_Account ?? '',
    data.MsgKey,
  ]);
  const owner = `bench-${deliveries++}`;
  if (store.claim(key, owner, 60_000) !== 'claimed') throw new Error('every event of the load is new');
  onEvent();
  store.complete(key, owner, 3_600_000);
}

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

/** A node:http receiver that reads the body whole, hands it to `work`, then answers 200. */
function receiveOnNode(work: (body: Buffer) => void) {
  listen(
    createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        work(Buffer.concat(chunks));
        res.writeHead(200, { ...HEADERS, 'content-length': OK.length });
        res.end(OK);
      });
    }),
  );
}

if (kind === 'sdk-node') {
  listen(createServer(createWebhookHandler({ onEvent, dedupe: true })));
} else if (kind === 'raw-node') {
  receiveOnNode((body) => {
    JSON.parse(body.toString('utf8'));
    onEvent();
  });
} else if (kind === 'by-hand-node') {
  receiveOnNode(deliverOnce);
} else if (kind === 'sdk-fetch' || kind === 'raw-fetch' || kind === 'by-hand-fetch') {
  const handlers = {
    'sdk-fetch': createFetchWebhookHandler({ onEvent, dedupe: true }),
    'raw-fetch': async (request: Request) => {
      await request.json();
      onEvent();
      return new Response(OK, { status: 200, headers: HEADERS });
    },
    'by-hand-fetch': async (request: Request) => {
      deliverOnce(new Uint8Array(await request.arrayBuffer()));
      return new Response(OK, { status: 200, headers: HEADERS });
    },
  };
  const server = serve({ fetch: handlers[kind], hostname: '127.0.0.1', port: 0 }, (info) =>
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
