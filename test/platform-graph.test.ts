// The entry points a Worker imports bundle for the web conditions with no Node built-in, undici,
// form-data or file-type in the graph (API.md, "Other runtimes"). Reads the build (`npm run build`).
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'oa-graph-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the web module graph', () => {
  it('oa-messaging and oa-messaging/webhook bundle for workerd with zero errors and no Node-only module', async () => {
    expect(existsSync(join(ROOT, 'dist/core/runtime-web.js')), 'run npm run build first').toBe(true);
    // As installed: the package's files without the repository's tsconfig (whose paths point at src).
    const installed = join(dir, 'node_modules/oa-messaging');
    cpSync(join(ROOT, 'dist'), join(installed, 'dist'), { recursive: true });
    cpSync(join(ROOT, 'package.json'), join(installed, 'package.json'));
    const entry = join(dir, 'worker.mjs');
    writeFileSync(
      entry,
      "export { OAClient } from 'oa-messaging';\nexport { createFetchWebhookHandler } from 'oa-messaging/webhook';\n",
    );
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      write: false,
      format: 'esm',
      platform: 'neutral',
      minify: true,
      conditions: ['workerd', 'worker', 'browser'],
      mainFields: ['module', 'main'],
      nodePaths: [join(ROOT, 'node_modules')],
      metafile: true,
      logLevel: 'silent',
    });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((file) => /node_modules\/(undici|form-data|file-type)\//.test(file))).toEqual([]);
    expect(inputs.filter((file) => /dist\/.*runtime-node/.test(file))).toEqual([]);
    const imports = Object.values(result.metafile.inputs).flatMap((input) =>
      input.imports.map((i) => i.path),
    );
    expect(imports.filter((path) => path.startsWith('node:'))).toEqual([]);
  });
});
