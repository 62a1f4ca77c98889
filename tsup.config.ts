import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'webhook/index': 'src/webhook/index.ts',
    'testing/index': 'src/testing/index.ts',
    'testing/msw': 'src/testing/msw.ts',
    'redis/index': 'src/redis/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
});
