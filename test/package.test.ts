import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cp, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer } from '../src/testing/index.js';
import { VERSION } from '../src/version.js';
import {
  compile,
  node as nodeIn,
  PROBE,
  project as projectIn,
  run,
  strictTsconfig,
} from './helpers/consumer.js';
import { guidePages, tsBlocks } from './helpers/readme-blocks.js';
import { readmeMentions } from './helpers/readme-links.js';
import { COMPILERS, NODE_SOURCE, NODE_TSCONFIG, WORKER_SOURCE, WORKER_TSCONFIG } from './package-types.js';
import { REDIS_SERVER, startRedisServer } from './redis/redis-server.js';

const root = new URL('..', import.meta.url).pathname;
const ENTRIES = [
  'oa-messaging',
  'oa-messaging/webhook',
  'oa-messaging/testing',
  'oa-messaging/testing/msw',
  'oa-messaging/redis',
  'oa-messaging/queue',
  'oa-messaging/bot',
];
/** The libraries of the `oa` command, bundled into it: none may reach a library user's install. */
const CLI_LIBRARIES = [
  'commander',
  'cli-progress',
  'string-width',
  'strip-ansi',
  'ansi-regex',
  'emoji-regex',
];
let consumer: string;
/** The packed tarball. */
let tarball: string;
/** An app that installed the tarball and nothing else: what `npm install oa-messaging` gives. */
let bare: string;
/** What npm printed installing it there. */
let bareInstall: { stdout: string; stderr: string };
/** The repository's package.json before the pack. */
let repositoryManifest: string;
/**
 * A copy of the repository's working tree that `npm pack` runs in. The pack's prepack rebuilds dist/
 * (cleaning it first) and writes the published package.json over the repository's until its postpack:
 * in the repository itself, a test file running beside this one could read a dist/ or a package.json
 * half-way. Its node_modules is the repository's (a link).
 */
let source: string;
/** What the copy leaves out: what the repository's own installs and builds make, and git's. */
const NOT_COPIED = ['node_modules', 'dist', 'coverage', 'docs/api', '.git', '.package.json.packing'];

/**
 * Packs the package as npm would publish it and installs the tarball (with @types/node, as a
 * TypeScript user has it, and msw 2.10, an older release within the range of the optional peer of
 * oa-messaging/testing/msw) into an empty folder. Each consumer project below is a folder of its own in
 * it, with its own package.json and tsconfig, resolving the package as an installed dependency. A second
 * app installs the tarball alone.
 */
beforeAll(async () => {
  consumer = await mkdtemp(join(tmpdir(), 'oa-messaging-consumer-'));
  bare = await mkdtemp(join(tmpdir(), 'oa-messaging-app-'));
  // Packed as `npm publish` packs: its prepack builds (the API reference too: it ships in docs/api) and
  // writes the published manifest, its postpack puts the repository's back.
  source = await mkdtemp(join(tmpdir(), 'oa-messaging-source-'));
  const skipped = new Set(NOT_COPIED.map((path) => join(root, path)));
  await cp(root, source, {
    recursive: true,
    filter: (from) => !skipped.has(from.replace(/\/$/, '')) && !from.endsWith('.tgz'),
  });
  await symlink(join(root, 'node_modules'), join(source, 'node_modules'), 'dir');
  repositoryManifest = await readFile(join(source, 'package.json'), 'utf8');
  await run('npm', ['pack', '--pack-destination', consumer], { cwd: source, timeout: 600_000 });
  const filename = (await readdir(consumer)).find((file) => file.endsWith('.tgz')) ?? 'no tarball';
  tarball = join(consumer, filename);
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
      'msw@~2.10.0',
    ],
    { cwd: consumer },
  );
  await writeFile(join(bare, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  bareInstall = await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(consumer, filename)],
    { cwd: bare },
  );
  await writeFile(join(consumer, 'probe.cjs'), PROBE);
}, 900_000);

afterAll(async () => {
  if (consumer) await rm(consumer, { recursive: true, force: true });
  if (bare) await rm(bare, { recursive: true, force: true });
  if (source) await rm(source, { recursive: true, force: true });
});

const node = (args: string[], cwd = consumer) => nodeIn(args, cwd);
const project = (name: string, type: 'module' | 'commonjs', files: Record<string, string>) =>
  projectIn(consumer, name, type, files);

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
  it('holds dist, the README, its guides and the documents they point at, the examples, and declares no side effects', async () => {
    const installed = join(consumer, 'node_modules', 'oa-messaging');
    const files = await readdir(installed);
    expect(files.sort()).toEqual([
      'BENCHMARKS.md',
      'CHANGELOG.md',
      'CONTRIBUTING.md',
      'LICENSE',
      'README.md',
      'dist',
      'docs',
      'examples',
      'package.json',
    ]);
    const guides = guidePages(root).map((page) => page.replace('docs/', ''));
    expect(guides.length).toBeGreaterThanOrEqual(8);
    expect((await readdir(join(installed, 'docs'))).sort()).toEqual(
      ['api', 'inbox.png', 'trace.svg', ...guides].sort(),
    );
    const manifest = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      sideEffects: unknown;
    };
    expect(manifest.sideEffects).toBe(false);
  });

  it('carries the license of every package bundled into it, beside the code', async () => {
    const dist = join(consumer, 'node_modules', 'oa-messaging', 'dist');
    const headings = (text: string) => [...text.matchAll(/^## (\S+) /gm)].map(([, name]) => name);
    const library = await readFile(join(dist, 'THIRD-PARTY-NOTICES.md'), 'utf8');
    expect(headings(library)).toEqual(['zod']);
    expect(library).toContain('Copyright (c) 2025 Colin McDonnell');
    const cli = await readFile(join(dist, 'cli', 'THIRD-PARTY-NOTICES.md'), 'utf8');
    expect(headings(cli)).toEqual(
      expect.arrayContaining(['commander', 'cli-progress', 'string-width', 'zod']),
    );
    expect(cli.match(/Permission is hereby granted/g)?.length).toBe(headings(cli).length);
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
      // Its token pairs kept in the consumer's folder, not the user's (nor the next run's).
      const env = {
        ...process.env,
        XDG_CONFIG_HOME: consumer,
        OA_BASE_URL: url,
        OA_API_KEY: apiKey,
        OA_API_SECRET: apiSecret,
      };
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
      // `oa mock-server` starts with a demo directory (user-1 to user-5): the one sent to is among them.
      expect(shown.users.map((u) => u.user_id)).toContain('user-1');
    } finally {
      server.kill('SIGTERM');
      await once(server, 'close');
    }
  });

  it('oa mock-server --bot support-bot: the example bot answers a message typed in the web inbox', async () => {
    const oa = join(consumer, 'node_modules', '.bin', 'oa');
    const args = ['mock-server', '--json', '--quiet', '--bot', 'support-bot'];
    const server = spawn(oa, args, { cwd: consumer, stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const [line] = (await once(createInterface({ input: server.stdout }), 'line')) as [string];
      const { url } = JSON.parse(line) as Record<string, string>;
      const typed = await fetch(`${url}/_inbox/reply`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: 'user-1', kind: 'text', text: 'order 1001' }),
      });
      expect(typed.status).toBe(200);
      await expect
        .poll(async () => JSON.stringify(await (await fetch(`${url}/_inbox/state`)).json()), {
          timeout: 10_000,
        })
        .toContain('Order 1001 is shipped');
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

  it("the exported schemas work inside the app's own zod schemas (the SDK carries zod's code in its build)", async () => {
    const dir = await project('app-zod', 'module', {
      'index.js': `import * as z from 'zod/mini';
import { MessageItemSchema, OAClient, items } from 'oa-messaging';
import { TextElemSchema } from 'oa-messaging/webhook';
const Campaign = z.object({ name: z.string(), items: z.array(MessageItemSchema) });
const good = z.safeParse(Campaign, { name: 'sale', items: [items.text('Sale today')] });
const bad = z.safeParse(Campaign, { name: 'sale', items: [{ type: 'sticker' }] });
const Tagged = z.extend(TextElemSchema, { Tag: z.string() });
const tagged = z.parse(Tagged, { MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' }, Tag: 't' });
// The app's zod configuration reaches the SDK's schemas: zod keeps it on globalThis.
z.config(z.locales.de());
let configured;
try {
  new OAClient({ apiKey: 'key', apiSecret: 'secret', baseUrl: 5 });
} catch (error) {
  configured = error.message;
}
console.log(JSON.stringify({
  configured,
  good: good.success,
  bad: bad.success,
  path: bad.error?.issues[0]?.path,
  instance: MessageItemSchema instanceof z.ZodMiniType && TextElemSchema instanceof z.ZodMiniObject,
  tagged,
}));
`,
    });
    const { stdout, stderr } = await node(['index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual({
      configured: expect.stringContaining('Ungültige Eingabe'),
      good: true,
      bad: false,
      path: ['items', 0, 'type'],
      instance: true,
      tagged: { MsgType: 'TIMTextElem', MsgContent: { Text: 'hi' }, Tag: 't' },
    });
  });

  it("loads none of zod's own files: its code comes in the package's build", async () => {
    const dir = await project('cjs-zod-free', 'commonjs', {
      'index.js': `require('oa-messaging');
require('oa-messaging/webhook');
console.log(JSON.stringify(Object.keys(require.cache).filter((file) => /[\\\\/]node_modules[\\\\/]zod[\\\\/]/.test(file))));
`,
    });
    const { stdout, stderr } = await node(['index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual([]);
  });

  /** Type-checks a TypeScript project with the package's own types, compiles it, runs the output. */
  const typescript = async (
    name: string,
    type: 'module' | 'commonjs',
    compilerOptions: Record<string, unknown>,
    source: string,
  ) => {
    const dir = await project(name, type, {
      'tsconfig.json': strictTsconfig(compilerOptions),
      'index.ts': source,
    });
    await compile(dir);
    const { stdout, stderr } = await node(['out/index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  };

  // The types are checked, not just present: a wrong use must not compile.
  // Every entry point, and every optional property given as a value that may be undefined (as
  // `process.env.X` is), under exactOptionalPropertyTypes.
  const typed = `${esmImports}import type { BroadcastParams, OAClientOptions, RequestOptions, SendResult } from 'oa-messaging';
import { createRedisCoordination } from 'oa-messaging/redis';
import { createFakeOA, type MockServerOptions } from 'oa-messaging/testing';
import { createMswHandlers } from 'oa-messaging/testing/msw';
import { createFetchWebhookHandler, createWebhookHandler, type WebhookEvent } from 'oa-messaging/webhook';
const maybe: string | undefined = process.env.OA_NOT_SET;
const options: OAClientOptions = { maxRetries: 1, apiKey: maybe, logLevel: undefined, dispatcher: undefined, appInfo: undefined };
const perCall: RequestOptions = { signal: undefined, timeoutMs: undefined, maxRetries: undefined, onResponse: undefined };
const params: BroadcastParams = { target: 'selected', user_ids: ['user-1'], items: [items.text('x')] };
// @ts-expect-error: a broadcast needs its items
const wrong: BroadcastParams = { target: 'all' };
const mockOptions: MockServerOptions = { port: undefined, apiKey: maybe };
const coordination = createRedisCoordination({ url: 'redis://127.0.0.1:6379', prefix: maybe });
const handlers = createMswHandlers(createFakeOA({ apiSecret: maybe }), { baseUrl: 'https://oa.test' });
const onEvent = (event: WebhookEvent) => void event;
const receivers = [createWebhookHandler({ onEvent, maxBodyBytes: undefined, logger: undefined }), createFetchWebhookHandler({ onEvent, dedupe: undefined })];
void options; void perCall; void params; void wrong; void mockOptions; void coordination; void handlers; void receivers;
const check = (result: SendResult, event: WebhookEvent) => [result, event];
void check;
`;

  it('TypeScript, module nodenext, as ESM', { timeout: 60_000 }, async () => {
    await typescript(
      'ts-nodenext-esm',
      'module',
      { module: 'nodenext', moduleResolution: 'nodenext' },
      `${typed}${program}`,
    );
  });

  it('TypeScript, module nodenext, as CommonJS', { timeout: 60_000 }, async () => {
    await typescript(
      'ts-nodenext-cjs',
      'commonjs',
      { module: 'nodenext', moduleResolution: 'nodenext' },
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

/** Every package name in an `npm ls --json` tree. */
function namesIn(tree: { dependencies?: Record<string, unknown> }): string[] {
  return Object.entries(tree.dependencies ?? {}).flatMap(([name, child]) => [
    name,
    ...namesIn(child as { dependencies?: Record<string, unknown> }),
  ]);
}

describe('a library user installs only the SDK', () => {
  it('npm ls --omit=dev --all in an app that installed the tarball lists no CLI library', async () => {
    const { stdout } = await run('npm', ['ls', '--omit=dev', '--all', '--json'], { cwd: bare });
    const tree = JSON.parse(stdout) as {
      dependencies: Record<string, { dependencies?: Record<string, unknown> }>;
    };
    const sdk = tree.dependencies['oa-messaging'];
    // The optional peers (msw, ioredis) are listed as not installed, with no version.
    const installed = Object.entries(sdk?.dependencies ?? {}).filter(
      ([, d]) => (d as { version?: string }).version,
    );
    expect(installed.map(([name]) => name).sort()).toEqual(['file-type', 'form-data', 'undici', 'zod']);
    const names = namesIn(tree);
    expect(names.filter((name) => CLI_LIBRARIES.includes(name))).toEqual([]);
    // ... and the command still runs there, its libraries inside it.
    const { stdout: help } = await run(join(bare, 'node_modules', '.bin', 'oa'), ['--help'], {
      timeout: 20_000,
    });
    expect(help).toContain('Usage: oa [options] [command]');
  });

  it("require('oa-messaging/testing/msw') without msw says what to install", async () => {
    const required = await node(['-e', "require('oa-messaging/testing/msw')"], bare).catch(
      (error: { stderr: string }) => error,
    );
    expect(required.stderr).toContain(
      'OAConfigError: oa-messaging/testing/msw needs the msw package (2.x), an optional peer dependency: npm install --save-dev msw',
    );
    const imported = await node(
      ['--input-type=module', '-e', "await import('oa-messaging/testing/msw')"],
      bare,
    ).catch((error: { stderr: string }) => error);
    expect(imported.stderr).toMatch(/Cannot find package 'msw'/);
  });
});

describe('the published manifest', () => {
  it('has no scripts, devDependencies or overrides; the repository keeps its own', async () => {
    const installed = JSON.parse(
      await readFile(join(bare, 'node_modules', 'oa-messaging', 'package.json'), 'utf8'),
    ) as Record<string, unknown>;
    expect(Object.keys(installed).filter((key) => /scripts|devDependencies|overrides/.test(key))).toEqual([]);
    expect(Object.keys(installed.dependencies as object).sort()).toEqual([
      'file-type',
      'form-data',
      'undici',
      'zod',
    ]);
    expect(installed).toMatchObject({ bin: { oa: 'dist/cli/index.js' }, exports: expect.any(Object) });
    // The postpack put the repository's package.json back as it was: a clone still builds on install.
    expect(await readFile(join(source, 'package.json'), 'utf8')).toBe(repositoryManifest);
  });

  it('installing the package prints no warning about its scripts', () => {
    expect(`${bareInstall.stdout}${bareInstall.stderr}`).not.toMatch(/prepare|install-scripts.*oa-messaging/);
  });
});

describe('consumer types with TypeScript 5.9 and 7 (skipLibCheck false)', () => {
  const cases = [
    [
      'worker',
      'a Worker (lib ES2022 and WebWorker, no @types/node): the root and webhook entries',
      WORKER_TSCONFIG,
      WORKER_SOURCE,
    ],
    [
      'node',
      'Node (nodenext, @types/node): a Readable, node:http, an undici Agent',
      NODE_TSCONFIG,
      NODE_SOURCE,
    ],
  ] as const;
  for (const [compiler, tsc] of Object.entries(COMPILERS)) {
    for (const [folder, name, tsconfig, source] of cases) {
      it(`${compiler}: ${name}`, { timeout: 60_000 }, async () => {
        const dir = await project(`types-${folder}-${compiler.replace(/\W/g, '')}`, 'module', {
          'tsconfig.json': tsconfig,
          'index.ts': source,
        });
        await compile(dir, tsc);
      });
    }
  }
});

describe("the README's CommonJS quickstart", () => {
  it('compiles in a CommonJS project (nodenext, strict) and runs against the installed package', {
    timeout: 60_000,
  }, async () => {
    const blocks = tsBlocks(await readFile(join(root, 'README.md'), 'utf8')).filter((b) => b.commonjs);
    expect(blocks).toHaveLength(1);
    const dir = await project('readme-cjs', 'commonjs', {
      'tsconfig.json': strictTsconfig({ module: 'nodenext', moduleResolution: 'nodenext' }),
      'index.ts': blocks[0]?.code ?? '',
    });
    await compile(dir);
    const mock = await createMockServer();
    try {
      const env = {
        ...process.env,
        OA_BASE_URL: mock.url,
        OA_API_KEY: mock.apiKey,
        OA_API_SECRET: mock.apiSecret,
      };
      const { stderr } = await run(process.execPath, ['out/index.js'], { cwd: dir, env, timeout: 30_000 });
      expect(stderr).toBe('');
      expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendText']);
    } finally {
      await mock.close();
    }
  });
});

describe('the README and its guides, followed by a package user (only node_modules/oa-messaging)', () => {
  const installed = () => join(bare, 'node_modules', 'oa-messaging');
  const oa = (args: string[], cwd = bare) =>
    run(join(cwd, 'node_modules', '.bin', 'oa'), args, { cwd, timeout: 20_000 });
  const noAccount = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OA_')),
  );

  it('every link and file they name is in the package, and every script or other file is labelled as for a clone', async () => {
    const missing: string[] = [];
    for (const page of ['README.md', ...guidePages(root)]) {
      const mentions = readmeMentions(await readFile(join(installed(), page), 'utf8'));
      if (page === 'README.md') expect(mentions.filter((m) => m.kind === 'link').length).toBeGreaterThan(0);
      for (const m of mentions) {
        // A link must resolve wherever it is: a reader of the package follows it.
        if ((m.cloneOnly && m.kind !== 'link') || m.kind === 'example') continue;
        // A link is relative to its page (its #anchor is test/guides.test.ts's); a path named in the
        // text is of the repository's root.
        const target =
          m.kind === 'link'
            ? join(dirname(page), m.target.replace(/#.*$/, ''))
            : m.target.replace(/\*.*$/, '');
        // A script of the repository's package.json runs in a clone only; a file must be in the package.
        // The repository's own test files, named as what checks a claim, are never in a package.
        const found =
          m.kind !== 'script' &&
          (m.target.startsWith('test/') || (await stat(join(installed(), target)).catch(() => undefined)));
        if (!found) missing.push(`${page}:${m.line} ${m.kind} ${m.target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('ships the API reference under docs/api, every page reachable from its index', async () => {
    const api = join(installed(), 'docs', 'api');
    const pages = (await readdir(api, { recursive: true })).filter((f) => f.endsWith('.md')).sort();
    expect(pages).toContain('README.md');
    const linked = new Set<string>(['README.md']);
    for (const page of pages) {
      const text = await readFile(join(api, page), 'utf8');
      for (const [, target] of text.matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
        const file = join(dirname(page), target ?? '');
        expect(pages, `${page} links ${target}`).toContain(file);
        linked.add(file);
      }
    }
    expect([...linked].sort()).toEqual(pages);
    const client = await readFile(join(api, 'oa-messaging.md'), 'utf8');
    expect(client).toContain('**sendText**(`params`, `options?`)');
  });

  it('npx oa example NAME writes a runnable example into the current folder, and each runs against the fake', {
    timeout: 120_000,
  }, async () => {
    const names = [
      ...new Set(
        readmeMentions(await readFile(join(installed(), 'README.md'), 'utf8'))
          .filter((m) => m.kind === 'example')
          .map((m) => m.target),
      ),
    ];
    expect(names).toContain('webhook-receiver');
    const { stdout: list } = await oa(['example']);
    for (const name of ['quickstart', 'webhook-receiver', 'campaign']) expect(list).toContain(name);
    for (const name of ['quickstart', 'webhook-receiver']) {
      const written = await oa(['example', name]);
      expect(written.stdout).toContain(`node ${name}.mjs`);
      // The app is CommonJS (what npm init writes): the example runs as an ES module all the same.
      const ran = await run(process.execPath, [`${name}.mjs`], {
        cwd: bare,
        env: noAccount,
        timeout: 60_000,
      });
      expect(ran.stdout).toContain('using the fake OA server at http://127.0.0.1:');
    }
    // Both share support/connect.mjs, written once. A file of the user's own (changed) is left alone.
    await writeFile(join(bare, 'quickstart.mjs'), '// my own changes\n', { flag: 'a' });
    const again = await oa(['example', 'quickstart']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(again).toMatchObject({ code: 2, stderr: expect.stringContaining('quickstart.mjs') });
  });

  it.skipIf(!REDIS_SERVER)(
    'npx oa example campaign runs with bullmq and ioredis installed, against a redis-server',
    {
      timeout: 180_000,
    },
    async () => {
      const app = await projectIn(consumer, 'campaign-app', 'commonjs', {});
      await run(
        'npm',
        ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, 'bullmq', 'ioredis'],
        { cwd: app, timeout: 150_000 },
      );
      await oa(['example', 'campaign'], app);
      const redis = await startRedisServer();
      try {
        const ran = await run(process.execPath, ['campaign.mjs'], {
          cwd: app,
          env: { ...noAccount, REDIS_URL: redis.url },
          timeout: 60_000,
        });
        expect(ran.stdout).toContain('"delivered":120');
      } finally {
        await redis.stop();
      }
    },
  );
});

describe('an app on undici 6', () => {
  it('passes its own undici 6 Agent as dispatcher: compiles (skipLibCheck off), sends and uploads', {
    timeout: 120_000,
  }, async () => {
    const dir = await project('undici6', 'module', {
      'tsconfig.json': strictTsconfig({ module: 'nodenext', moduleResolution: 'nodenext' }),
      'index.ts': `import { readFileSync } from 'node:fs';
import { Agent } from 'undici';
import { OAClient } from 'oa-messaging';
import { createMockServer } from 'oa-messaging/testing';
const agent = new Agent({ keepAliveTimeout: 1_000 });
const mock = await createMockServer();
const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret, dispatcher: agent });
const sent = await client.sendText({ user_id: 'user-1', msg: 'through undici 6' });
const png = Buffer.from('${PNG}', 'base64');
const uploaded = await client.uploadImage({ data: png, filename: 'a.png' });
await client.close();
await agent.close();
await mock.close();
const undici = JSON.parse(readFileSync(new URL('../node_modules/undici/package.json', import.meta.url), 'utf8')) as { version: string };
console.log(JSON.stringify({ sent, url: typeof uploaded.url, undici: undici.version.split('.')[0], requests: mock.requests.length }));
`,
    });
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', 'undici@6'], { cwd: dir });
    await compile(dir);
    const { stdout, stderr } = await node(['out/index.js'], dir);
    expect(stderr).toBe('');
    expect(JSON.parse(stdout)).toEqual({ sent: 'success', url: 'string', undici: '6', requests: 3 });
  });
});

/** A 1x1 PNG. */
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
