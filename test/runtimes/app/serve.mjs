// The app served by Bun (`bun run serve.mjs`) or Deno (`deno run -A serve.mjs`) on a free port of
// 127.0.0.1; prints `listening PORT` once it serves.
import { createApp } from './app.mjs';
import { testingScenarios } from './testing.mjs';

const env = globalThis.Bun ? Bun.env : Deno.env.toObject();
const app = createApp(env, testingScenarios);
const announce = (port) => console.log(`listening ${port}`);

if (globalThis.Bun) {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch });
  announce(server.port);
} else {
  Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }) => announce(port) }, app.fetch);
}
