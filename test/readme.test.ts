import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInboundEvent, createMockServer, sendInboundMessage } from '../src/testing/index.js';
import { listen } from './helpers/listen.js';
import { type Block, tsBlocks } from './helpers/readme-blocks.js';
import { collectOutput } from './helpers/run-script.js';

/**
 * Every TypeScript block of the README, compiled with the repository's strict tsconfig (where
 * 'oa-messaging' is src/), so that the README cannot drift from the API. A block marked
 * `<!-- readme-test: run -->` is also run, as a user would run it (tsx), against the fake OA server
 * named by OA_BASE_URL, OA_API_KEY and OA_API_SECRET; a `run commonjs` one needs the CommonJS build, so
 * test/package.test.ts runs it against the installed tarball. The other blocks are
 * fragments: the names they use without defining (`client`, `user_id`, an Express `app`...) are
 * declared for them.
 */
const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
let dir: string;

/** What the fragments use without defining it. */
const AMBIENT = `import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as oa from 'oa-messaging';
import type { WebhookEvent } from 'oa-messaging/webhook';
declare global {
  const OAClient: typeof oa.OAClient;
  const items: typeof oa.items;
  const isOAError: typeof oa.isOAError;
  const client: oa.OAClient;
  const user_id: string;
  const msg: string;
  const ticket_id: string;
  const audioBuffer: Buffer;
  const params: oa.BroadcastParams & oa.BroadcastToGroupParams;
  const signal: AbortSignal;
  const apiKey: string;
  const apiSecret: string;
  const myReceiverUrl: string;
  const metrics: { increment(name: string): void };
  const log: { debug(message: string): void };
  const onEvent: (event: WebhookEvent) => void;
  const customers: { id: string; text: string }[];
  const alertOps: (message: string, details: unknown) => void;
  const markSent: (key: string, result: unknown) => void;
  const connection: { url: string };
  function queueForReview(user_id: string, msg: string): void;
  const app: {
    post(path: string, handler: (c: { req: { raw: Request } }) => unknown): void;
    post(path: string, handler: (req: IncomingMessage, res: ServerResponse) => unknown): void;
  };
}
`;

const fileOf = (block: Block) => `block-${block.line}.${block.commonjs ? 'cts' : 'ts'}`;
let blocks: Block[];

beforeAll(async () => {
  blocks = tsBlocks(await readFile(join(root, 'README.md'), 'utf8'));
  // Outside the repository (whose tsconfig would take the declarations below as its own globals).
  dir = await mkdtemp(join(tmpdir(), 'oa-readme-'));
  await writeFile(join(dir, 'ambient.d.ts'), AMBIENT);
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

describe('README code blocks', () => {
  it('has runnable blocks and fragments to check', () => {
    expect(blocks.filter((b) => b.run).map((b) => b.commonjs)).toEqual([false, true, false, false]);
    expect(blocks.length).toBeGreaterThan(10);
  });

  it('every TypeScript block compiles under the strict tsconfig (exactOptionalPropertyTypes on)', {
    timeout: 120_000,
  }, async () => {
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '--noEmit', '-p', dir], { timeout: 110_000 }).catch(
      (error: { stdout: string }) => error,
    );
    // Errors are reported against the README's own line numbers.
    const errors = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) =>
        line.replace(
          /^.*block-(\d+)\.c?ts\((\d+),(\d+)\)/,
          (_m, start: string, row: string, column: string) => {
            return `README.md:${Number(start) + Number(row)}:${column}`;
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
          throw new Error(`README.md block at line ${block.line} failed:\n${error.stderr}${error.stdout}`);
        });
        expect({ line: block.line, stderr }).toEqual({ line: block.line, stderr: '' });
        expect(mock.deliveries.length, `README.md block at line ${block.line}`).toBeGreaterThan(0);
      } finally {
        await mock.close();
      }
    }
  });
});

/** The recipe block of `name`; fails the test when there is none. */
function recipe(name: string): Block {
  const block = blocks.find((b) => b.recipe?.name === name);
  if (!block) throw new Error(`README.md has no webhook recipe marked for ${name}`);
  return block;
}

/** A free port on 127.0.0.1, for a recipe to listen on. */
async function freePort(): Promise<number> {
  const probe = await listen(() => {});
  await probe.close();
  return Number(new URL(probe.url).port);
}

describe('README webhook recipes, one per framework', () => {
  it('has a recipe for Express, Fastify, Hono, Koa, Next.js and NestJS', () => {
    const recipes = blocks.flatMap((b) => (b.recipe ? [`${b.recipe.kind} ${b.recipe.name}`] : []));
    expect(recipes.sort()).toEqual([
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
        // Until the recipe listens: a refused connection delivers nothing, so trying again is safe.
        const started = Date.now();
        let reply: Awaited<ReturnType<typeof sendInboundMessage>> | undefined;
        while (!reply) {
          reply = await sendInboundMessage(url, 'Is the blue jacket in stock?').catch((error: unknown) => {
            if (Date.now() - started > 40_000)
              throw new Error(`${name} never listened:\n${output()}`, { cause: error });
            return new Promise<undefined>((resolve) => setTimeout(resolve, 200));
          });
        }
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
    // Outside the compiled folder: the driver is the test's, not the README's.
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
