import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildInboundEvent,
  createMockServer,
  type InboundDelivery,
  type InboundMessageOptions,
  type MockServer,
  sendInboundMessage,
} from '../src/testing/index.js';
import { freePort } from './helpers/ports.js';
import { README_AMBIENT } from './helpers/readme-ambient.js';
import { docPages, type Block as PageBlock, tsBlocks } from './helpers/readme-blocks.js';
import { collectOutput } from './helpers/run-script.js';

/**
 * Every TypeScript block of the README, CONTRIBUTING.md and the guides (docs/*.md), compiled with the
 * repository's strict tsconfig (where 'oa-messaging' is src/), so that no page can drift from the API.
 * Every page's blocks are compiled together, each as a module of its own. A block marked
 * `<!-- readme-test: run -->` is also run, as a user would run it (tsx), against the fake OA server
 * named by OA_BASE_URL, OA_API_KEY and OA_API_SECRET; a `run commonjs` one needs the CommonJS build, so
 * test/package.test.ts runs it against the installed tarball. The other blocks are
 * fragments: the names they use without defining (`client`, `user_id`, an Express `app`...) are
 * declared for them. The webhook recipes run as their framework serves them; the runtime recipes
 * (`<!-- runtime: workerd | deno | bun -->`, run in those runtimes by the runtime suites) are compiled
 * here, and the Worker's is also driven on Node with a KV and a `ctx` of plain objects.
 */
const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
let dir: string;

/** A code block and the page it is on (`README.md`, `docs/runtimes.md` ...). */
type Block = PageBlock & { page: string };
/** Where a block is: its page and the line of its opening fence. */
const at = (block: Block) => `${block.page}:${block.line}`;
const fileOf = (block: Block) =>
  `${block.page.replace(/\.md$/, '').replace(/\W/g, '-')}-${block.line}.${block.commonjs ? 'cts' : 'ts'}`;
let blocks: Block[];

beforeAll(async () => {
  blocks = [];
  for (const page of docPages(root)) {
    for (const block of tsBlocks(await readFile(join(root, page), 'utf8'))) blocks.push({ ...block, page });
  }
  // Outside the repository (whose tsconfig would take the declarations below as its own globals).
  dir = await mkdtemp(join(tmpdir(), 'oa-readme-'));
  await writeFile(join(dir, 'ambient.d.ts'), README_AMBIENT);
  await writeFile(
    join(dir, 'tsconfig.json'),
    // A CommonJS project writes `import` too: verbatimModuleSyntax (this repository's choice) is off.
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      // noUncheckedIndexedAccess as a strict user has it (the repository's own setting, made explicit);
      // parameter decorators (NestJS) need the experimental ones.
      compilerOptions: {
        verbatimModuleSyntax: false,
        noUncheckedIndexedAccess: true,
        experimentalDecorators: true,
      },
      include: ['*.ts', '*.cts'],
    }),
  );
  await writeFile(join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  // The blocks import what a user has installed: @types/node, vitest...
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  // Each block is a module of its own (the runnable ones as written; `export {}` does not change them).
  for (const block of blocks) {
    await writeFile(join(dir, fileOf(block)), `${block.code}\n${block.commonjs ? '' : 'export {};\n'}`);
  }
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the code blocks of the README and the guides', () => {
  it('has runnable blocks and fragments to check, on the README and on the guides', () => {
    const readme = blocks.filter((b) => b.page === 'README.md');
    expect(readme.filter((b) => b.run).map((b) => b.commonjs)).toEqual([false, true]);
    expect(blocks.filter((b) => b.run && b.page.startsWith('docs/')).length).toBeGreaterThanOrEqual(2);
    expect(new Set(blocks.map((b) => b.page)).size).toBeGreaterThanOrEqual(9);
    expect(blocks.length).toBeGreaterThan(30);
  });

  it('every TypeScript block compiles under the strict tsconfig (exactOptionalPropertyTypes on)', {
    timeout: 120_000,
  }, async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '--noEmit', '-p', dir], { timeout: 110_000 }).catch(
      (error: { stdout: string }) => error,
    );
    // Errors are reported against the page's own line numbers.
    const byFile = new Map(blocks.map((block) => [fileOf(block), block]));
    const errors = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) =>
        line.replace(
          /^(?:.*\/)?([\w-]+\.c?ts)\((\d+),(\d+)\)/,
          (whole, file: string, row: string, column: string) => {
            const block = byFile.get(file);
            return block ? `${block.page}:${block.line + Number(row)}:${column}` : whole;
          },
        ),
      );
    expect(errors).toEqual([]);
  });

  it('the runnable blocks run against the fake server, and send what they say', {
    timeout: 60_000,
  }, async () => {
    for (const block of blocks.filter((b) => b.run && !b.commonjs)) {
      const mock = await createMockServer();
      try {
        const env = {
          ...process.env,
          OA_LOG: '',
          OA_BASE_URL: mock.url,
          OA_API_KEY: mock.apiKey,
          OA_API_SECRET: mock.apiSecret,
        };
        const { stderr } = await run(process.execPath, ['--import', 'tsx', join(dir, fileOf(block))], {
          cwd: root,
          env,
          timeout: 30_000,
        }).catch((error: { stderr: string; stdout: string }) => {
          throw new Error(`the block at ${at(block)} failed:\n${error.stderr}${error.stdout}`);
        });
        expect({ block: at(block), stderr }).toEqual({ block: at(block), stderr: '' });
        expect(mock.deliveries.length, `the block at ${at(block)}`).toBeGreaterThan(0);
      } finally {
        await mock.close();
      }
    }
  });
});

/** The recipe block of `name` (of `kind`, else not an echo bot); fails the test when there is none. */
function recipe(name: string, kind?: NonNullable<Block['recipe']>['kind']): Block {
  const block = blocks.find(
    (b) => b.recipe?.name === name && (kind ? b.recipe.kind === kind : b.recipe.kind !== 'echo'),
  );
  if (!block) throw new Error(`no page has a webhook recipe marked for ${name}`);
  return block;
}

/**
 * Posts an inbound message to a recipe that is starting: a refused connection delivers nothing, so it
 * is tried again every 200 ms, for at most 40 s (then `never` names the failure).
 */
async function postOnceListening(
  url: string,
  message: string,
  options: InboundMessageOptions,
  never: () => Error,
): Promise<InboundDelivery> {
  const started = Date.now();
  for (;;) {
    const reply = await sendInboundMessage(url, message, options).catch((error: unknown) => {
      if (Date.now() - started > 40_000) throw Object.assign(never(), { cause: error });
      return new Promise<undefined>((resolve) => setTimeout(resolve, 200));
    });
    if (reply) return reply;
  }
}

describe('webhook recipes, one per framework (docs/receiving.md, docs/runtimes.md, the README)', () => {
  it('has a recipe for Express, Fastify, Hono, Koa, Next.js and NestJS', () => {
    const recipes = blocks.flatMap((b) => (b.recipe ? [`${b.recipe.kind} ${b.recipe.name}`] : []));
    expect(recipes.sort()).toEqual([
      'echo hono',
      'echo nextjs',
      'echo node',
      'receiver express',
      'receiver fastify',
      'receiver hono',
      'receiver koa',
      'receiver nestjs',
      'route-handler nextjs',
    ]);
  });

  it('shows the check that getMessageMedia(...)[i].url asks for (compiled with noUncheckedIndexedAccess)', () => {
    const uses = blocks.filter((b) => /getMessageMedia\([^)]*\)\[\w+\]/.test(b.code));
    expect(uses.length).toBeGreaterThan(0);
    for (const block of uses) expect(block.code).toMatch(/\?\.url|\.url !== undefined|\.url\)/);
  });

  for (const name of ['express', 'fastify', 'hono', 'koa', 'nestjs']) {
    it(`${name}: the recipe listens on PORT, answers an inbound message 200 and runs onEvent`, {
      timeout: 60_000,
    }, async () => {
      const block = recipe(name);
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', join(dir, fileOf(block))], {
        cwd: root,
        // Under the tsconfig the recipes compile with: NestJS's parameter decorators need
        // experimentalDecorators, as in any Nest project.
        env: {
          ...process.env,
          OA_LOG: '',
          PORT: String(port),
          TSX_TSCONFIG_PATH: join(dir, 'tsconfig.json'),
        },
        stdio: 'pipe',
      });
      const output = collectOutput(child);
      const exited = once(child, 'exit');
      try {
        const url = `http://127.0.0.1:${port}/oa/webhook`;
        const reply = await postOnceListening(
          url,
          'Is the blue jacket in stock?',
          {},
          () => new Error(`${name} never listened:\n${output()}`),
        );
        expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: { ok: true } });
        await expect.poll(output, { timeout: 10_000 }).toContain('message Is the blue jacket in stock?');
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });
  }

  it('nextjs: the route handler answers a Request carrying an inbound message', {
    timeout: 60_000,
  }, async () => {
    const block = recipe('nextjs');
    expect(block.code).toMatch(/export async function POST\(request: Request\)/);
    // Outside the compiled folder: the driver is the test's, not the page's.
    await mkdir(join(dir, 'drive'), { recursive: true });
    const driver = join(dir, 'drive', 'nextjs.ts');
    const event = JSON.stringify(buildInboundEvent('Are you open on Sunday?'));
    await writeFile(
      driver,
      `import { POST } from '../${fileOf(block).replace(/\.ts$/, '.js')}';
const request = new Request('http://localhost/api/oa/webhook', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: ${JSON.stringify(event)},
});
const response = await POST(request);
console.log('answered', response.status, await response.text());
`,
    );
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', driver], {
      cwd: root,
      env: { ...process.env, OA_LOG: '' },
      timeout: 30_000,
    });
    expect(stderr).toBe('');
    expect(stdout).toContain('message Are you open on Sunday?');
    expect(stdout).toContain('answered 200 {"ok":true}');
  });
});

/** The recipe block for `runtime` (a `<!-- runtime: NAME -->` marker); fails the test when there is none. */
function runtimeRecipe(runtime: string): Block {
  const marked = blocks.filter((b) => b.runtime === runtime);
  expect(marked, `blocks marked <!-- runtime: ${runtime} -->`).toHaveLength(1);
  return marked[0] as Block;
}

/**
 * The echo bots' one reply, to `user` for `text`, as the fake server recorded it. Checked at once: each
 * recipe replies before its answer, or (the Worker) inside the `waitUntil` its driver waited for.
 */
function expectEcho(mock: MockServer, user: string, text: string) {
  expect(mock.deliveries.filter((d) => d.endpoint === 'sendText')).toMatchObject([
    { user_ids: [user], items: [{ type: 'message', msg: `You said: ${text}` }] },
  ]);
}

/** OA_BASE_URL, OA_API_KEY and OA_API_SECRET naming `mock`, as the recipes read them. */
const clientEnv = (mock: MockServer) => ({
  ...process.env,
  OA_LOG: '',
  OA_BASE_URL: mock.url,
  OA_API_KEY: mock.apiKey,
  OA_API_SECRET: mock.apiSecret,
});

describe('runtime recipes: an echo bot per runtime', () => {
  let mock: MockServer;
  beforeAll(async () => {
    mock = await createMockServer();
  });
  afterAll(async () => {
    await mock?.close();
  });

  it('marks one complete program each for workerd, Deno and Bun, serving /oa/webhook', () => {
    for (const runtime of ['workerd', 'deno', 'bun']) {
      const { code } = runtimeRecipe(runtime);
      expect(code).toMatch(/^import \{ OAClient \} from 'oa-messaging';$/m);
      expect(code).toMatch(/from 'oa-messaging\/webhook';$/m);
      expect(code).toContain("'/oa/webhook'");
      expect(code).toContain('client.sendText({ user_id: event.data.From_Account');
    }
    const worker = runtimeRecipe('workerd').code;
    expect(worker).toContain('export default {');
    expect(worker).toContain('async fetch(request: Request, env: Env, ctx: ExecutionContext)');
    expect(worker).toContain('handler(request, ctx)');
    for (const name of ['OA_BASE_URL', 'OA_API_KEY', 'OA_API_SECRET']) {
      expect(worker).toContain(`env.${name}`);
      expect(runtimeRecipe('deno').code).toContain(`Deno.env.get('${name}')`);
    }
    expect(runtimeRecipe('deno').code).toContain("Number(Deno.env.get('PORT') ?? 3000)");
    expect(runtimeRecipe('bun').code).toContain('Number(process.env.PORT ?? 3000)');
  });

  // hono: Hono on Node with its adapter (docs/runtimes.md); node: the README's receive quickstart.
  for (const name of ['hono', 'node']) {
    it(`${name}: served on Node, it answers an inbound message 200 and replies to its sender`, {
      timeout: 60_000,
    }, async () => {
      mock.reset();
      const port = await freePort();
      const child = spawn(process.execPath, ['--import', 'tsx', join(dir, fileOf(recipe(name, 'echo')))], {
        cwd: root,
        env: { ...clientEnv(mock), PORT: String(port) },
        stdio: 'pipe',
      });
      const output = collectOutput(child);
      const exited = once(child, 'exit');
      try {
        const url = `http://127.0.0.1:${port}/oa/webhook`;
        const reply = await postOnceListening(url, 'Is the blue jacket in stock?', { from: 'user-7' }, () =>
          Error(`the ${name} echo bot never listened:\n${output()}`),
        );
        expect({ status: reply.status, body: reply.body }).toEqual({ status: 200, body: { ok: true } });
        expectEcho(mock, 'user-7', 'Is the blue jacket in stock?');
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    });
  }

  /** Runs `source`, a driver of a recipe written beside the compiled blocks, with the client's env. */
  async function drive(name: string, source: string) {
    await mkdir(join(dir, 'drive'), { recursive: true });
    const driver = join(dir, 'drive', `${name}.ts`);
    await writeFile(driver, source);
    return run(process.execPath, ['--import', 'tsx', driver], {
      cwd: root,
      env: clientEnv(mock),
      timeout: 30_000,
    });
  }

  it('nextjs: the exported POST answers a Request carrying an inbound message, after replying', {
    timeout: 60_000,
  }, async () => {
    mock.reset();
    const block = recipe('nextjs', 'echo');
    const event = JSON.stringify(buildInboundEvent('Are you open on Sunday?', { from: 'user-3' }));
    const { stdout, stderr } = await drive(
      'nextjs-echo',
      `import { POST } from '../${fileOf(block).replace(/\.ts$/, '.js')}';
const request = new Request('http://localhost/oa/webhook', {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: ${JSON.stringify(event)},
});
const response = await POST(request);
console.log('answered', response.status, await response.text());
`,
    );
    expect(stderr).toBe('');
    expect(stdout).toContain('answered 200 {"ok":true}');
    expectEcho(mock, 'user-3', 'Are you open on Sunday?');
  });

  it('workerd recipe, driven on Node: answers 200 once the event is in KV, replies inside waitUntil', {
    timeout: 60_000,
  }, async () => {
    mock.reset();
    const event = buildInboundEvent('Do you ship abroad?', { from: 'user-5' }) as {
      data: { MsgKey: string };
    };
    const { stdout, stderr } = await drive(
      'worker',
      `import worker from '../${fileOf(runtimeRecipe('workerd')).replace(/\.ts$/, '.js')}';
const kv = new Map<string, { value: string; options: unknown }>();
const handed: Promise<unknown>[] = [];
const env = {
  OA_BASE_URL: process.env.OA_BASE_URL,
  OA_API_KEY: process.env.OA_API_KEY,
  OA_API_SECRET: process.env.OA_API_SECRET,
  OA_EVENTS: { put: async (key: string, value: string, options: unknown) => void kv.set(key, { value, options }) },
};
const ctx = { waitUntil(promise: Promise<unknown>) { handed.push(promise); }, passThroughOnException() {} };
const notFound = await worker.fetch(new Request('http://worker/elsewhere', { method: 'POST' }), env as never, ctx);
const response = await worker.fetch(
  new Request('http://worker/oa/webhook', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: ${JSON.stringify(JSON.stringify(event))},
  }),
  env as never,
  ctx,
);
console.log('answered', notFound.status, response.status, await response.text());
console.log('stored', JSON.stringify([...kv.keys()]), JSON.stringify(kv.get(${JSON.stringify(event.data.MsgKey)})?.options));
console.log('handed', handed.length);
await Promise.all(handed);
`,
    );
    expect(stderr).toBe('');
    expect(stdout).toContain('answered 404 200 {"ok":true}');
    expect(stdout).toContain(`stored ["${event.data.MsgKey}"] {"expirationTtl":604800}`);
    expect(stdout).toContain('handed 1');
    expectEcho(mock, 'user-5', 'Do you ship abroad?');
  });
});
