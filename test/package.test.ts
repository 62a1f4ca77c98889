import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/version.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const ENTRIES = [
  'oa-messaging',
  'oa-messaging/webhook',
  'oa-messaging/testing',
  'oa-messaging/testing/msw',
  'oa-messaging/redis',
  'oa-messaging/queue',
];
let consumer: string;

/**
 * Loads one entry (`node probe.cjs ENTRY require|import`) and prints its export names and every timer,
 * socket or other handle created while it loaded, unref'd ones included (an async hook sees them all).
 * The process's own stdio streams do not count: a peer (msw) opens stderr.
 */
const PROBE = `const { createHook } = require('node:async_hooks');
const { writeSync } = require('node:fs');
const [entry, how] = process.argv.slice(2);
const KINDS = /Timeout|Immediate|TCP|PIPE|TTY|UDP|TLS|HTTP|DNS|GETADDRINFO|WORKER|MESSAGEPORT|SIGNAL|PROCESS|FSEVENT|STATWATCHER/;
const created = [];
const hook = createHook({ init(id, type, trigger, resource) { if (KINDS.test(type)) created.push({ type, resource }); } }).enable();
const loaded = how === 'require' ? Promise.resolve(require(entry)) : import(entry);
loaded.then((m) => {
  hook.disable();
  const stdio = [process.stdin, process.stdout, process.stderr].map((stream) => stream._handle);
  const own = created.filter(({ resource }) => !stdio.includes(resource)).map(({ type }) => type);
  writeSync(1, JSON.stringify({ keys: Object.keys(m).filter((k) => k !== 'default').sort(), created: own }));
});
`;

/**
 * Packs the package as npm would publish it and installs the tarball (with @types/node, as a
 * TypeScript user has it, and msw, the optional peer of oa-messaging/testing/msw) into an empty folder. Each consumer project below is a folder of its own in
 * it, with its own package.json and tsconfig, resolving the package as an installed dependency.
 */
beforeAll(async () => {
  consumer = await mkdtemp(join(tmpdir(), 'oa-messaging-consumer-'));
  // Build first, then pack without scripts, so that stdout is nothing but npm's JSON.
  await run('npm', ['run', 'build'], { cwd: root });
  const { stdout } = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', consumer],
    {
      cwd: root,
    },
  );
  const [{ filename }] = JSON.parse(stdout) as [{ filename: string }];
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  await run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      join(consumer, filename),
      '@types/node@^20.19.0',
      'msw@^2.15.0',
    ],
    { cwd: consumer },
  );
  await writeFile(join(consumer, 'probe.cjs'), PROBE);
}, 180_000);

afterAll(async () => {
  if (consumer) await rm(consumer, { recursive: true, force: true });
});

async function node(args: string[], cwd = consumer) {
  return run(process.execPath, args, { cwd, timeout: 30_000 });
}

/** A consumer project: its package.json (module type), tsconfig when given, and source files. */
async function project(name: string, type: 'module' | 'commonjs', files: Record<string, string>) {
  const dir = join(consumer, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type }));
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/** What every consumer program does with the package, written in its own module syntax. */
const program = `
  const mock = await createMockServer();
  const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  const sent = await client.sendText({ user_id: 'user-1', msg: 'Hello from a consumer' });
  const record = await client.broadcast({ target: 'all', items: [items.text('Sale today')] });
  const refused = await client
    .broadcast({ target: 'all', items: [] })
    .then(() => 'sent', (error) => (isOAError(error) && error instanceof OAValidationError ? error.name : 'other'));
  const event = parseWebhookEvent({
    event_type: 'message',
    username: 'oa_account',
    timestamp: '2019-05-10T09:38:46.000Z',
    data: { From_Account: 'user-1', To_Account: 'oa_account', MsgTime: 1557481126, MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' } }] },
  });
  await client.close();
  await mock.close();
  console.log(JSON.stringify({ sent, record: typeof record.id, refused, deliveries: mock.deliveries.length, event: event.event_type }));
`;
const EXPECTED = {
  sent: 'success',
  record: 'string',
  refused: 'OAValidationError',
  deliveries: 2,
  event: 'message',
};

const esmImports = `import { OAClient, OAValidationError, isOAError, items } from 'oa-messaging';
import { createMockServer } from 'oa-messaging/testing';
import { parseWebhookEvent } from 'oa-messaging/webhook';
`;

describe('the packed tarball', () => {
  it('holds dist and the package files only, and declares no side effects', async () => {
    const installed = join(consumer, 'node_modules', 'oa-messaging');
    const files = await readdir(installed);
    expect(files.sort()).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'dist', 'package.json']);
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      sideEffects: unknown;
    };
    expect(manifest.sideEffects).toBe(false);
  });

  it('installs the oa command, which runs through its shebang', async () => {
    const { stdout } = await run(join(consumer, 'node_modules', '.bin', 'oa'), ['--version'], {
      cwd: consumer,
      timeout: 20_000,
    });
    expect(stdout.trim()).toBe(VERSION);
  });

  it('the installed oa works with its installed dependencies: mock-server, send, upload', async () => {
    const oa = join(consumer, 'node_modules', '.bin', 'oa');
    const server = spawn(oa, ['mock-server', '--json'], { cwd: consumer, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
      const { url, apiKey, apiSecret } = JSON.parse(line) as Record<string, string>;
      const env = { ...process.env, OA_BASE_URL: url, OA_API_KEY: apiKey, OA_API_SECRET: apiSecret };
      const options = { cwd: consumer, env, timeout: 20_000 };
      const sent = await run(oa, ['send', 'text', '--user', 'user-1', '--msg', 'Hello', '--json'], options);
      const image = join(root, 'test', 'fixtures', 'media', 'sample.png');
      const upload = await run(oa, ['upload', 'image', image, '--json'], options);
      expect(JSON.parse(sent.stdout)).toBe('success');
      expect(JSON.parse(upload.stdout)).toEqual({ src_file: expect.any(String), url: expect.any(String) });
      expect(upload.stderr).toBe('upload sample.png 0% 0 B/275 B\nupload sample.png 100% 275 B/275 B\n');
      // The web inbox ships inside the package: the page, and the state it draws.
      const page = await fetch(`${url}/`);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(await page.text()).toContain('<title>OA inbox');
      const shown = (await (await fetch(`${url}/_inbox/state`)).json()) as { users: { user_id: string }[] };
      expect(shown.users.map((u) => u.user_id)).toEqual(['user-1']);
    } finally {
      server.kill('SIGTERM');
      await once(server, 'close');
    }
  });

  const probe = async (entry: string, how: 'require' | 'import') => {
    const { stdout, stderr } = await node([join(consumer, 'probe.cjs'), entry, how]);
    expect(stderr).toBe('');
    return JSON.parse(stdout) as { keys: string[]; created: string[] };
  };

  for (const entry of ENTRIES) {
    it(`${entry} loads with require() and with import, silently, creating no timer or socket`, async () => {
      const [cjs, esm] = [await probe(entry, 'require'), await probe(entry, 'import')];
      expect(cjs.keys.length).toBeGreaterThan(0);
      expect(esm.keys).toEqual(cjs.keys);
      // What a peer opens by itself is the peer's (msw opens a MessagePort); nothing more may appear.
      const peer = entry === 'oa-messaging/testing/msw' ? (await probe('msw', 'require')).created : [];
      expect({ entry, cjs: cjs.created, esm: esm.created }).toEqual({ entry, cjs: peer, esm: peer });
    });
  }
});

describe('consumer projects', () => {
  it('CommonJS: require() of every entry, a send, a broadcast and a refused broadcast', async () => {
    const dir = await project('cjs', 'commonjs', {
      'index.js': `const { OAClient, OAValidationError, isOAError, items } = require('oa-messaging');
const { createMockServer } = require('oa-messaging/testing');
const { parseWebhookEvent } = require('oa-messaging/webhook');
(async () => {${program}})();
`,
    });
    const { stdout, stderr } = await node(['index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  it('ESM: import of every entry', async () => {
    const dir = await project('esm', 'module', { 'index.js': `${esmImports}${program}` });
    const { stdout, stderr } = await node(['index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  /** Type-checks a TypeScript project with the package's own types, compiles it, runs the output. */
  const typescript = async (
    name: string,
    type: 'module' | 'commonjs',
    compilerOptions: Record<string, unknown>,
    source: string,
  ) => {
    const tsconfig = {
      compilerOptions: {
        target: 'es2022',
        strict: true,
        exactOptionalPropertyTypes: true,
        noUncheckedIndexedAccess: true,
        skipLibCheck: false,
        types: ['node'],
        outDir: 'out',
        ...compilerOptions,
      },
      include: ['index.ts'],
    };
    const dir = await project(name, type, { 'tsconfig.json': JSON.stringify(tsconfig), 'index.ts': source });
    await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir }).catch(
      (error: { stdout?: string }) => {
        throw new Error(`tsc failed in ${name}:\n${error.stdout ?? String(error)}`);
      },
    );
    const { stdout, stderr } = await node(['out/index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  };

  // The types are checked, not just present: a wrong use must not compile.
  const typed = `${esmImports}import type { BroadcastParams, OAClientOptions, SendResult } from 'oa-messaging';
import type { WebhookEvent } from 'oa-messaging/webhook';
const options: OAClientOptions = { maxRetries: 1 };
const params: BroadcastParams = { target: 'selected', user_ids: ['user-1'], items: [items.text('x')] };
// @ts-expect-error: a broadcast needs its items
const wrong: BroadcastParams = { target: 'all' };
void options; void params; void wrong;
const check = (result: SendResult, event: WebhookEvent) => [result, event];
void check;
`;

  it('TypeScript, moduleResolution node16, as ESM', { timeout: 60_000 }, async () => {
    await typescript(
      'ts-node16-esm',
      'module',
      { module: 'node16', moduleResolution: 'node16' },
      `${typed}${program}`,
    );
  });

  it('TypeScript, moduleResolution node16, as CommonJS', { timeout: 60_000 }, async () => {
    await typescript(
      'ts-node16-cjs',
      'commonjs',
      { module: 'node16', moduleResolution: 'node16' },
      `${typed}void (async () => {${program}})();\n`,
    );
  });

  it('TypeScript, moduleResolution bundler', { timeout: 60_000 }, async () => {
    await typescript(
      'ts-bundler',
      'module',
      { module: 'preserve', moduleResolution: 'bundler' },
      `${typed}${program}`,
    );
  });
});
