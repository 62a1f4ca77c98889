// What differs by runtime lives in small files beside the code that needs it, chosen by package.json
// "imports" (`#core-runtime`, `#webhook-runtime` ...): each alias is imported from its own folder only,
// `schemas/` imports none, and every runtime's file of an alias gives the same names, of the same types.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type * as coreNode from '../../src/core/runtime-node.js';
import * as coreWeb from '../../src/core/runtime-web.js';
import * as coreWorkerd from '../../src/core/runtime-workerd.js';
import type * as endpointsNode from '../../src/endpoints-runtime.js';
import * as endpointsWorkerd from '../../src/endpoints-runtime-workerd.js';
import type * as telemetryNode from '../../src/telemetry/runtime-node.js';
import * as telemetryWeb from '../../src/telemetry/runtime-web.js';
import type * as uploadsNode from '../../src/uploads/runtime-node.js';
import * as uploadsWeb from '../../src/uploads/runtime-web.js';
import * as uploadsWorkerd from '../../src/uploads/runtime-workerd.js';
import type * as webhookNode from '../../src/webhook/runtime-node.js';
import * as webhookWeb from '../../src/webhook/runtime-web.js';
import * as webhookWorkerd from '../../src/webhook/runtime-workerd.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');

type Target = string | { [condition: string]: Target };
const { imports } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  imports: Record<string, Target>;
};

/** Every target of an alias, as its source file relative to the root (`./dist/a.js` is `src/a.ts`). */
function sourcesOf(target: Target): string[] {
  if (typeof target === 'string') return [target.replace(/^\.\/dist\//, 'src/').replace(/\.c?js$/, '.ts')];
  return [...new Set(Object.values(target).flatMap(sourcesOf))];
}

/** Every .ts file under src/ (the inbox page's browser script aside), relative to the root. */
function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [relative(ROOT, path)] : [];
  });
}

describe('the runtime files', () => {
  it('each runtime alias is imported from the folder of its files only, and schemas/ imports none', () => {
    const misplaced: string[] = [];
    for (const file of sourceFiles()) {
      const { importedFiles } = ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, true);
      for (const { fileName } of importedFiles) {
        const target = imports[fileName];
        if (!fileName.startsWith('#')) continue;
        if (target === undefined) {
          misplaced.push(`${file} imports ${fileName}, which package.json "imports" does not name`);
          continue;
        }
        const folders = new Set(sourcesOf(target).map(dirname));
        if (file.startsWith('src/schemas/') || !folders.has(dirname(file))) {
          misplaced.push(`${file} imports ${fileName} (files in ${[...folders].join(', ')})`);
        }
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('every file of an alias exports the same names', async () => {
    for (const [alias, target] of Object.entries(imports)) {
      const names = await Promise.all(
        sourcesOf(target).map(async (source) => [
          source,
          Object.keys(await import(join(ROOT, source))).sort(),
        ]),
      );
      const [first] = names;
      for (const [source, exported] of names) expect(exported, `${alias}: ${source}`).toEqual(first?.[1]);
    }
  });

  it("every runtime's file has the types of Node's (checked by tsc)", () => {
    const core: (typeof coreNode)[] = [coreWeb, coreWorkerd];
    const uploads: (typeof uploadsNode)[] = [uploadsWeb, uploadsWorkerd];
    const webhook: (typeof webhookNode)[] = [webhookWeb, webhookWorkerd];
    const telemetry: (typeof telemetryNode)[] = [telemetryWeb];
    const endpoints: (typeof endpointsNode)[] = [endpointsWorkerd];
    expect([core, uploads, webhook, telemetry, endpoints].flat()).toHaveLength(8);
  });
});
