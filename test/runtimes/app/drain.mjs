// An answer-first receiver (`waitUntil: true`) served by Bun or Deno on a free port of 127.0.0.1,
// drained on SIGTERM. Its onEvent waits for `POST /release`; it prints `listening PORT pid PID`, then
// `onEvent started`, `onEvent finished` and `drained` as they happen.
import { createFetchWebhookHandler } from 'oa-messaging/webhook';

let release = () => {};
const released = new Promise((resolve) => {
  release = resolve;
});
const handler = createFetchWebhookHandler({
  waitUntil: true,
  store: () => {},
  onEvent: async () => {
    console.log('onEvent started');
    await released;
    console.log('onEvent finished');
  },
});
const fetch = (request) => {
  const { pathname } = new URL(request.url);
  if (pathname === '/release') {
    release();
    return new Response('released');
  }
  return handler(request);
};

const drainThenExit = async (stop) => {
  await handler.close({ timeoutMs: 10_000 });
  console.log('drained');
  await stop();
};
if (globalThis.Bun) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch });
  console.log(`listening ${server.port} pid ${process.pid}`);
  process.once('SIGTERM', () => drainThenExit(() => server.stop()));
} else {
  const server = Deno.serve(
    {
      hostname: '127.0.0.1',
      port: 0,
      onListen: ({ port }) => console.log(`listening ${port} pid ${Deno.pid}`),
    },
    fetch,
  );
  const onTerm = () => {
    Deno.removeSignalListener('SIGTERM', onTerm);
    drainThenExit(() => server.shutdown());
  };
  Deno.addSignalListener('SIGTERM', onTerm);
}
