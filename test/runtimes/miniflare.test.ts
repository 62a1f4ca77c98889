/**
 * The way docs/runtimes.md runs the Worker locally (`<!-- worker-dev: miniflare -->`): its dev.mjs, run
 * with Node, bundles that page's Worker recipe and serves it in Miniflare with an in-memory KV namespace.
 * An inbound event posted to it must be answered 200 and its reply reach the fake OA server. Miniflare
 * needs Node 22 or later: `.ci/run` runs this suite on Node 22.
 */
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { freePort } from '../helpers/ports.js';
import { runtimeRecipes } from './recipes.js';
import { distMissing, ROOT, type Served, serveChild } from './support.js';

const readme = await readFile(join(ROOT, 'docs', 'runtimes.md'), 'utf8');
const lines = readme.split('\n');
const marker = lines.indexOf('<!-- worker-dev: miniflare -->');
const devScript = lines.slice(marker + 2, lines.indexOf('```', marker + 2)).join('\n');
const worker = runtimeRecipes(readme).find((recipe) => recipe.runtime === 'workerd');

const major = Number(process.versions.node.split('.')[0]);
const skip =
  major < 22
    ? `Miniflare needs Node 22 or later, this is Node ${process.versions.node} (.ci/run runs this suite on Node 22)`
    : distMissing();
if (skip) console.warn(`docs/runtimes.md Worker dev recipe (Miniflare) skipped: ${skip}`);

it('docs/runtimes.md has the Worker recipe and its Miniflare dev script', () => {
  expect(marker).toBeGreaterThan(0);
  expect(devScript).toContain("from 'miniflare'");
  expect(worker?.code).toContain('OA_EVENTS');
});

describe.skipIf(skip !== undefined)('the Worker recipe run locally with Miniflare (docs/runtimes.md)', () => {
  let mock: MockServer;
  let dir: string;
  let served: Served | undefined;

  beforeAll(async () => {
    mock = await createMockServer({ rateLimit: false });
    dir = await mkdtemp(join(tmpdir(), 'oa-miniflare-'));
    // The package as installed (a copy: a link would give the bundler the repository's tsconfig paths),
    // and the two tools the recipe installs.
    const installed = join(dir, 'node_modules', 'oa-messaging');
    await mkdir(installed, { recursive: true });
    await cp(join(ROOT, 'package.json'), join(installed, 'package.json'));
    await cp(join(ROOT, 'dist'), join(installed, 'dist'), { recursive: true });
    for (const tool of ['miniflare', 'esbuild']) {
      await symlink(join(ROOT, 'node_modules', tool), join(dir, 'node_modules', tool), 'dir');
    }
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    await writeFile(join(dir, 'worker.ts'), worker?.code ?? '');
    await writeFile(join(dir, 'dev.mjs'), devScript);
    const port = await freePort();
    const env = {
      OA_BASE_URL: mock.url,
      OA_API_KEY: mock.apiKey,
      OA_API_SECRET: mock.apiSecret,
      PORT: String(port),
    };
    served = await serveChild(
      process.execPath,
      ['dev.mjs'],
      { cwd: dir, env, withinMs: 60_000 },
      (output) => /Worker listening at (http:\/\/\S+)\/oa\/webhook/.exec(output)?.[1],
    );
  }, 90_000);

  afterAll(async () => {
    await served?.stop();
    await mock?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('answers an inbound text at /oa/webhook, and its reply reaches the fake OA server', async () => {
    const response = await fetch(`${served?.url}/oa/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        event_type: 'message',
        username: 'oa_shop',
        timestamp: '2019-05-10T09:38:46.000Z',
        data: {
          From_Account: 'miniflare_user',
          To_Account: 'oa_shop',
          MsgKey: '7_2837546_1557481126',
          MsgTime: 1557481126,
          MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'Do you ship abroad?' } }],
        },
      }),
      signal: AbortSignal.timeout(15_000),
    });
    expect(response.status, served?.output()).toBe(200);
    await response.body?.cancel();
    await expect
      .poll(
        () => mock.deliveries.filter((d) => d.user_ids.includes('miniflare_user')).map((d) => d.endpoint),
        {
          timeout: 15_000,
        },
      )
      .toEqual(['sendText']);
  });
});
