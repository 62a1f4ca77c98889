import { defineConfig } from 'vitest/config';

/**
 * Tests that assert how long the rate limiter takes against a server enforcing its windows: they run
 * after every other file, on their own, so that the CPU load of parallel files (child processes of the
 * example and package tests) cannot stretch their timings on a 2-core machine.
 */
const TIMING = ['test/limits.test.ts', 'test/redis/processes.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: TIMING },
      },
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
