import { mkdir, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import type { TestProject } from 'vitest/node';
import { cli } from '../../tsup.config.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built `oa` binary the CLI tests run. */
    oaBin: string;
  }
}

/**
 * Builds the `oa` binary once for every CLI test file, from the very tsup config `npm run build` uses,
 * into a directory of its own inside node_modules (where the binary's dependencies resolve). Not in
 * dist: the repository's dist/ is the build the other tests read. The config's `onSuccess` (which
 * writes the examples and the notices into dist/) is left out for the same reason.
 */
export default async function setup(project: TestProject): Promise<void> {
  const outDir = fileURLToPath(new URL('../../node_modules/.cache/oa-cli-test/', import.meta.url));
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const { onSuccess: _writesIntoDist, ...options } = cli;
  await build({ ...options, outDir, config: false, silent: true, sourcemap: false });
  project.provide('oaBin', `${outDir}cli/index.js`);
}
