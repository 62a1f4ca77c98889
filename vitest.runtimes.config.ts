import { defineConfig } from 'vitest/config';

/**
 * The runtime suites (`npm run test:runtimes`): the built package run in Bun, Deno and workerd, the
 * Worker bundle's size, the README's runtime recipes. Kept out of `npm test` (vitest.config.ts); run
 * after `npm run build`. One file per runtime, each starting its runtime once.
 */
export default defineConfig({
  test: {
    include: ['test/runtimes/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    maxWorkers: 2,
  },
});
