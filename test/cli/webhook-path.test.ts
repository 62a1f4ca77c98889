/**
 * One default webhook path everywhere: the paths the recipes and commands of the README and the guides
 * (docs/*.md) serve or post to, those of the examples, and what the `oa` binary itself uses (`oa webhook
 * listen` without `--path`, the URL `oa inbound text --help` shows) are all `/oa/webhook`, a secret
 * segment after it aside.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { oa, type Started, startOa } from './run-oa.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const DEFAULT_PATH = '/oa/webhook';

/** Paths of the OA API (`/webhook/broadcast-message`) and of the fake's inbox are not receivers. */
const isReceiverPath = (path: string) =>
  /webhook/.test(path) && !/^\/(webhook\/broadcast-|_inbox\/|api\/v\d)/.test(path);

/** A path without its secret segment (`/3f9c1e...`, `/${token}`) or query. */
const withoutSecret = (path: string) =>
  path
    .split(/[?#]/)[0]!
    .split('/')
    .filter((segment) => !/\.\.\.|^<|^\$\{|^[0-9a-f]{6,}$/.test(segment))
    .join('/');

/** The receiver paths a text names: quoted routes, URLs, `--path`, Next.js route files. */
function webhookPaths(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /['"`](\/[^'"`\s]*)['"`]/g, // app.post('/oa/webhook', ...), pathname === '/oa/webhook'
    /https?:\/\/[^/\s'"`]+(\/[^\s'"`)]*)/g, // http://127.0.0.1:3000/oa/webhook
    /\}(\/[\w/.-]+)/g, // `${receiverUrl}/oa/webhook`
    /--path (\/\S+)/g,
    /\bapp\/([\w/-]+)\/route\.ts/g, // Next.js: app/oa/webhook/route.ts serves /oa/webhook
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const raw = match[1]!;
      const path = raw.startsWith('/') ? raw : `/${raw}`;
      if (isReceiverPath(path)) found.push(withoutSecret(path));
    }
  }
  return found;
}

describe('extracting webhook paths', () => {
  it('finds routes, URLs, --path and route files, and leaves out API paths and secrets', () => {
    const sample = [
      "app.post('/oa/webhook/3f9c1e...', handler);",
      "if (pathname === '/oa-webhook') return handler(request);",
      'oa inbound text hi --to http://127.0.0.1:3000/webhook',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a README line that holds a template literal
      'const url = `${receiver}/hooks/webhook`;',
      'oa webhook listen --path /my/webhook',
      'in `app/api/oa-webhook/route.ts`',
      "mock.injectFault('hang', { path: '/webhook/broadcast-message' }); import 'oa-messaging/webhook';",
    ].join('\n');
    expect(webhookPaths(sample).sort()).toEqual(
      ['/oa/webhook', '/oa-webhook', '/webhook', '/hooks/webhook', '/my/webhook', '/api/oa-webhook'].sort(),
    );
  });
});

let running: Started | undefined;
afterEach(() => {
  running?.child.kill('SIGKILL');
  running = undefined;
});

describe('one default webhook path', () => {
  it('the README, the guides and the examples serve and post to /oa/webhook', async () => {
    const pages = [
      'README.md',
      ...(await readdir(join(ROOT, 'docs')))
        .filter((name) => name.endsWith('.md'))
        .map((name) => `docs/${name}`),
    ];
    const pagePaths: string[] = [];
    for (const page of pages) pagePaths.push(...webhookPaths(await readFile(join(ROOT, page), 'utf8')));
    expect(pagePaths.length).toBeGreaterThan(10);
    expect(new Set(pagePaths)).toEqual(new Set([DEFAULT_PATH]));

    const examples = (await readdir(join(ROOT, 'examples'))).filter((name) => /\.(ts|mjs|js)$/.test(name));
    const examplePaths: string[] = [];
    for (const name of examples)
      examplePaths.push(...webhookPaths(await readFile(join(ROOT, 'examples', name), 'utf8')));
    expect(new Set(examplePaths)).toEqual(new Set([DEFAULT_PATH]));
  });

  it('`oa webhook listen` listens at /oa/webhook by default, as the guides say', async () => {
    running = startOa(['webhook', 'listen', '--port', '0']);
    const listening = /Listening for OA webhook events at http:\/\/[^/\s]+(\/\S*)/;
    await expect.poll(() => listening.test(running?.stderr() ?? ''), { timeout: 10_000 }).toBe(true);
    expect(listening.exec(running.stderr())?.[1]).toBe(DEFAULT_PATH);
  });

  it('`oa inbound text --help` shows a receiver URL at /oa/webhook', async () => {
    const help = await oa(['inbound', 'text', '--help']);
    expect(help.code).toBe(0);
    const paths = webhookPaths(help.stdout);
    expect(paths.length).toBeGreaterThan(0);
    expect(new Set(paths)).toEqual(new Set([DEFAULT_PATH]));
  });
});
