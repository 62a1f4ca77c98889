import { defineConfig, type Options } from 'tsup';

/** The library: ESM and CommonJS with types, one chunk graph for its entry points. */
const library: Options = {
  name: 'library',
  entry: {
    index: 'src/index.ts',
    'webhook/index': 'src/webhook/index.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/msw': 'src/testing/msw.ts',
    'redis/index': 'src/redis/index.ts',
    'queue/index': 'src/queue/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  // The CLI build writes dist/cli at the same time: cleaning it here could delete its fresh output.
  clean: ['!cli/**'],
  target: 'node20',
  splitting: true,
  treeshake: true,
};

/**
 * The `oa` command: one ESM file with the shebang (a banner applies to every file of a build, so the
 * CLI is a build of its own). No splitting, so a rebuild leaves no stale chunk behind in dist/cli.
 */
export const cli: Options = {
  name: 'cli',
  entry: { 'cli/index': 'src/cli/index.ts' },
  format: ['esm'],
  dts: false,
  sourcemap: true,
  clean: false,
  target: 'node20',
  splitting: false,
  treeshake: true,
  banner: { js: '#!/usr/bin/env node' },
};

export default defineConfig([library, cli]);
