import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** Each package.json `imports` alias, as the source file of its `node` target (`./dist/a.js` is `src/a.ts`). */
function nodeRuntimeSources(): Record<string, string> {
  const { imports } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as {
    imports: Record<string, { node: { import: string } }>;
  };
  return Object.fromEntries(
    Object.entries(imports).map(([alias, { node }]) => [
      alias,
      fileURLToPath(
        new URL(node.import.replace('./dist/', './src/').replace(/\.js$/, '.ts'), import.meta.url),
      ),
    ]),
  );
}

/**
 * Tests that assert how long the rate limiter (in-process or shared in Redis) and sendVideo's
 * transcode wait take, and the queue's and the bot's chaos tests (many processes, some killed): they
 * run after every other file, on their own, so that the CPU load of parallel files (child processes of
 * the example and package tests) cannot stretch their timings on a 2-core machine.
 */
const TIMING = [
  'test/limits.test.ts',
  'test/redis/processes.test.ts',
  'test/redis/limiter.test.ts',
  'test/core/rate-limit.timing.test.ts',
  'test/core/transcode-wait.test.ts',
  'test/queue/*.chaos.test.ts',
  'test/bot/*.chaos.test.ts',
];

/**
 * The `oa` command's tests: they run the binary, built once by their global setup. Tests of a file run
 * a few at a time (each with a fake server of its own), so that the child processes use both cores.
 */
const CLI = ['test/cli/**/*.test.ts'];

/** The web inbox in real Chromium: one browser per file, in a project of their own. */
const BROWSER = ['test/browser/**/*.test.ts'];

/** The SDK in Bun, Deno and workerd: a config of their own (vitest.runtimes.config.ts), not `npm test`. */
const RUNTIMES = ['test/runtimes/**'];

/**
 * Tests of the repository rather than of the SDK on a Node version: a fresh clone's install, the API
 * reference, the source conventions. CI runs the suite on three Node versions and sets
 * `OA_TEST_REPEAT=1` for the second and third: these run once, in the first.
 */
const ONCE_PER_CI_RUN = ['test/fresh-clone.test.ts', 'test/docs.test.ts', 'test/conventions/**'];
const repeatRun = process.env.OA_TEST_REPEAT === '1';

export default defineConfig({
  // The SDK's sources run under test: each runtime import (`#core-runtime` ...) is Node's source file,
  // not the built one (which would bring a second copy of the error classes).
  resolve: { alias: nodeRuntimeSources() },
  test: {
    // Two files at a time on the 2-core machines the suite runs on (the default, one less than the
    // cores, leaves one idle while a file waits on a server or a child process); the timing project
    // below still runs its files one by one, after the others.
    maxWorkers: 2,
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          include: ['test/**/*.test.ts'],
          exclude: [...TIMING, ...CLI, ...BROWSER, ...RUNTIMES, ...(repeatRun ? ONCE_PER_CI_RUN : [])],
        },
      },
      {
        extends: true,
        test: { name: 'cli', include: CLI, globalSetup: ['test/cli/global-setup.ts'], maxConcurrency: 3 },
      },
      { extends: true, test: { name: 'browser', include: BROWSER } },
      {
        extends: true,
        test: {
          name: 'timing',
          include: TIMING,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
