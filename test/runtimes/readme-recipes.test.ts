/**
 * The recipes of docs/runtimes.md for Workers, Deno.serve and Bun.serve (`<!-- runtime: X -->` before the code
 * block), each run in its runtime against the fake OA server: a text message posted to its
 * `/oa/webhook` must be answered 200, and its reply must reach the fake.
 */
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import { freePort } from '../helpers/ports.js';
import { type Recipe, runtimeRecipes, workerStoreBindings } from './recipes.js';
import {
  bundleWorker,
  distMissing,
  findRuntime,
  ROOT,
  runArgs,
  type Served,
  serveChild,
  serveWorker,
} from './support.js';

const SAMPLE = [
  'Some text.',
  '<!-- runtime: deno -->',
  '```ts',
  "Deno.serve({ port: Number(Deno.env.get('PORT')) }, () => new Response('ok'));",
  '```',
  '<!-- runtime: bun -->',
  '',
  '```ts',
  'not a recipe: the marker is not directly before the fence',
  '```',
  '<!-- runtime: workerd -->',
  '```js',
  'export default { fetch: (request, env) => env.EVENTS.put("k", "v") && env.JOBS.send({}) };',
  '```',
].join('\n');

describe('extracting the recipes', () => {
  it('takes the block right after each marker, with its runtime and language', () => {
    const recipes = runtimeRecipes(SAMPLE);
    expect(recipes.map(({ runtime, lang, line }) => ({ runtime, lang, line }))).toEqual([
      { runtime: 'deno', lang: 'ts', line: 3 },
      { runtime: 'workerd', lang: 'js', line: 12 },
    ]);
    expect(recipes[0]?.code).toContain('Deno.serve');
    expect(workerStoreBindings(recipes[1]?.code ?? '')).toEqual([
      { name: 'EVENTS', kind: 'kv' },
      { name: 'JOBS', kind: 'queue' },
    ]);
  });
});

const readme = await readFile(join(ROOT, 'docs', 'runtimes.md'), 'utf8');
const recipes = runtimeRecipes(readme);

it('docs/runtimes.md has a recipe for each of workerd, Deno and Bun', () => {
  expect([...new Set(recipes.map((r) => r.runtime))].sort()).toEqual(['bun', 'deno', 'workerd']);
});

const TEXT_EVENT = {
  event_type: 'message',
  username: 'oa_shop',
  timestamp: '2019-05-10T09:38:46.000Z',
  data: {
    CallbackCommand: 'C2C.CallbackAfterSendMsg',
    From_Account: 'recipe_user',
    To_Account: 'oa_shop',
    MsgSeq: 7,
    MsgRandom: 2837546,
    MsgTime: 1557481126,
    MsgKey: '7_2837546_1557481126',
    OnlineOnlyFlag: 0,
    SendMsgResult: 0,
    ErrorInfo: 'send msg succeed',
    UnreadMsgNum: 1,
    MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'Do you ship abroad?' } }],
  },
};

/** A folder where the recipe imports `oa-messaging` as an installed package (a link to this one). */
async function recipeFolder(recipe: Recipe): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), `oa-recipe-${recipe.runtime}-`));
  await mkdir(join(dir, 'node_modules'));
  await symlink(ROOT, join(dir, 'node_modules', 'oa-messaging'), 'dir');
  await writeFile(
    join(dir, 'package.json'),
    JSON.stringify({ type: 'module', dependencies: { 'oa-messaging': '*' } }),
  );
  const file = join(dir, `recipe.${recipe.lang}`);
  await writeFile(file, recipe.code);
  return { dir, file };
}

async function start(
  recipe: Recipe,
  mock: MockServer,
  bin: string,
  dir: string,
  file: string,
): Promise<Served> {
  const env = { OA_BASE_URL: mock.url, OA_API_KEY: mock.apiKey, OA_API_SECRET: mock.apiSecret };
  if (recipe.runtime === 'workerd') {
    return serveWorker(bin, await bundleWorker(file), env, workerStoreBindings(recipe.code));
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  return serveChild(
    bin,
    runArgs(recipe.runtime, file),
    { cwd: dir, env: { ...env, PORT: String(port) } },
    () =>
      fetch(`${url}/oa/webhook`, { signal: AbortSignal.timeout(1000) }).then(
        (response) => response.body?.cancel().then(() => url) ?? url,
        () => undefined,
      ),
  );
}

for (const recipe of recipes) {
  const found = findRuntime(recipe.runtime);
  const skip = 'missing' in found ? found.missing : distMissing();
  if (skip)
    console.warn(`docs/runtimes.md recipe of ${recipe.runtime} (line ${recipe.line}) skipped: ${skip}`);

  describe.skipIf(skip !== undefined)(
    `the ${recipe.runtime} recipe (docs/runtimes.md line ${recipe.line})`,
    () => {
      let mock: MockServer;
      let served: Served | undefined;
      let folder: { dir: string; file: string } | undefined;

      beforeAll(async () => {
        mock = await createMockServer({ rateLimit: false });
        folder = await recipeFolder(recipe);
        served = await start(recipe, mock, (found as { bin: string }).bin, folder.dir, folder.file);
      }, 60_000);
      afterAll(async () => {
        await served?.stop();
        await mock?.close();
        if (folder) await rm(folder.dir, { recursive: true, force: true });
      });

      it('answers a text message posted to /oa/webhook, and its reply reaches the fake', async () => {
        const response = await fetch(`${served?.url}/oa/webhook`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(TEXT_EVENT),
          signal: AbortSignal.timeout(10_000),
        });
        expect(response.status, served?.output()).toBe(200);
        await response.body?.cancel();
        await expect
          .poll(() => mock.deliveries.filter((d) => d.user_ids.includes('recipe_user')).length, {
            timeout: 10_000,
          })
          .toBeGreaterThan(0);
      });
    },
  );
}
