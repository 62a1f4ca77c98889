// The package without @opentelemetry/api: built, copied into a project whose node_modules hold every
// other package, it loads and calls in ES module and CommonJS form; a provider in the options says what
// to install. And with the API installed but nothing registered, a call does not load it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { afterAll, describe, expect, it } from 'vitest';
import { library } from '../../tsup.config.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'oa-no-otel-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const SCRIPT = (load: string) => `${load}
let loadable = true;
try { require.resolve('@opentelemetry/api'); } catch { loadable = false; }
if (loadable) throw new Error('@opentelemetry/api is installed here');
const fake = await createMockServer();
const options = { baseUrl: fake.url, apiKey: fake.apiKey, apiSecret: fake.apiSecret };
const client = new OAClient(options);
const answer = await client.sendText({ user_id: 'user-1', msg: 'hi' });
await client.close();
let refused = '';
try { new OAClient({ ...options, tracerProvider: { getTracer() {} } }); } catch (e) { refused = e instanceof OAConfigError ? e.message : 'wrong error'; }
await fake.close();
console.log(JSON.stringify({ answer, refused }));
`;

describe('without @opentelemetry/api installed', () => {
  it('loads, sends, and says what to install for a provider (ESM and CommonJS)', {
    timeout: 120_000,
  }, async () => {
    const built = join(work, 'built');
    // The library's own build, without its finishing step (which edits the real dist).
    const { onSuccess: _, ...options } = library;
    await build({ ...options, outDir: built, dts: false, clean: true, silent: true, config: false });
    const project = join(work, 'project');
    const modules = join(project, 'node_modules');
    mkdirSync(join(modules, 'oa-messaging'), { recursive: true });
    cpSync(built, join(modules, 'oa-messaging', 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(modules, 'oa-messaging', 'package.json'));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name === '@opentelemetry' || name === 'oa-messaging' || name.startsWith('.')) continue;
      symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
    }
    writeFileSync(join(project, 'package.json'), '{ "name": "app", "private": true }');
    writeFileSync(
      join(project, 'esm.mjs'),
      SCRIPT(
        "import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n" +
          "import { OAClient, OAConfigError } from 'oa-messaging';\nimport { createMockServer } from 'oa-messaging/testing';",
      ),
    );
    writeFileSync(
      join(project, 'cjs.cjs'),
      `(async () => {\nconst { OAClient, OAConfigError } = require('oa-messaging');\nconst { createMockServer } = require('oa-messaging/testing');\n${SCRIPT('')}\n})().catch((e) => { console.error(e); process.exit(1); });`,
    );
    for (const file of ['esm.mjs', 'cjs.cjs']) {
      const out = execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 30_000 });
      const result = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { answer: unknown; refused: string };
      expect(result.answer, file).toBe('success');
      expect(result.refused, file).toContain('npm install @opentelemetry/api');
    }
  });

  it('installed but nothing registered: a call and a webhook delivery do not load it', async () => {
    const script = join(work, 'not-loaded.mts');
    writeFileSync(
      script,
      `import { createRequire } from 'node:module';
import { OAClient } from ${JSON.stringify(join(ROOT, 'src/index.ts'))};
import { createMockServer, sendInboundMessage } from ${JSON.stringify(join(ROOT, 'src/testing/index.ts'))};
import { createWebhookHandler } from ${JSON.stringify(join(ROOT, 'src/webhook/index.ts'))};
import { listen } from ${JSON.stringify(join(ROOT, 'test/helpers/listen.ts'))};
const fake = await createMockServer();
const client = new OAClient({ baseUrl: fake.url, apiKey: fake.apiKey, apiSecret: fake.apiSecret });
await client.sendText({ user_id: 'user-1', msg: 'hi' });
const handler = createWebhookHandler({ onEvent: () => {} });
const server = await listen((req, res) => void handler(req, res));
const { status } = await sendInboundMessage(server.url, 'hello');
await server.close(); await client.close(); await fake.close();
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('@opentelemetry'));
console.log(JSON.stringify({ status, loaded }));
`,
    );
    const out = execFileSync(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(JSON.parse(out.trim().split('\n').pop() ?? '{}')).toEqual({ status: 200, loaded: [] });
  });
});
