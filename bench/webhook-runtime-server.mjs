// One receiver of bench/webhook-runtimes.bench.ts, run in Bun or Deno on that runtime's own server
// (Bun.serve, Deno.serve): the built SDK's fetch handler (parsing, validation and in-memory dedupe on),
// or the raw baseline, which reads the body with `request.json()` and answers the same status, headers
// and body. The argument picks the kind (`sdk` or `raw`). Prints its URL; ends when its stdin closes,
// with exit code 1 if it saw no event.

// The built package, as an application runs it (webhook-runtimes.bench.ts builds it first).
import { createFetchWebhookHandler } from '../dist/webhook/index.js';

const kind = globalThis.Bun ? Bun.argv[2] : Deno.args[0];
const OK = '{"ok":true}';
const HEADERS = { 'content-type': 'application/json; charset=utf-8' };
let events = 0;
const onEvent = () => {
  events += 1;
};

let fetchHandler;
if (kind === 'sdk') {
  fetchHandler = createFetchWebhookHandler({ onEvent, dedupe: true });
} else if (kind === 'raw') {
  fetchHandler = async (request) => {
    await request.json();
    onEvent();
    return new Response(OK, { status: 200, headers: HEADERS });
  };
} else {
  throw new Error(`unknown receiver ${kind}`);
}

const hostname = '127.0.0.1';
/** Resolves when stdin ends: the bench closes it to stop this receiver. */
async function stdinEnded(stream) {
  for await (const _ of stream);
}

if (globalThis.Bun) {
  const server = Bun.serve({ fetch: fetchHandler, hostname, port: 0 });
  console.log(`http://${hostname}:${server.port}/`);
  await stdinEnded(Bun.stdin.stream());
  // `true`: close the connections autocannon left open too, as webhook-server.ts does on Node.
  await server.stop(true);
  process.exit(events === 0 ? 1 : 0);
} else {
  const server = Deno.serve(
    { hostname, port: 0, onListen: ({ port }) => console.log(`http://${hostname}:${port}/`) },
    fetchHandler,
  );
  await stdinEnded(Deno.stdin.readable);
  await server.shutdown();
  Deno.exit(events === 0 ? 1 : 0);
}
