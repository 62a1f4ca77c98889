#!/usr/bin/env node
// Refuses an import cycle in src/, conditional imports included: `npm run check:cycles`, which CI runs.
//
// madge draws the graph and finds the cycles, but it resolves a package import (`#core-runtime`, any key of
// package.json "imports") to the built file for Node's conditions, in dist/, or to nothing before a
// build: a cycle through one is not seen. Here each such import is followed, once per condition the
// package names, to the source file that condition selects (dist/X.js is built from src/X.ts), and madge
// looks for cycles in each of those graphs. Exit 1 names every cycle and the conditions it runs under;
// exit 2 when an import target has no source file.
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import madge from 'madge';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? '.');
const srcDir = join(root, 'src');
const { imports = {} } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/** The target of an "imports" value under `condition` (ES module first), as Node picks it: first match wins. */
function targetOf(value, condition) {
  if (typeof value === 'string' || value === null) return value;
  for (const [key, inner] of Object.entries(value)) {
    if (key === condition || key === 'import' || key === 'default') {
      const found = targetOf(inner, condition);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The source file, relative to the root, that a target is built from: `./dist/a/b.js` -> `src/a/b.ts`. */
function sourceOf(target) {
  const source = target
    .replace(/^\.\//, '')
    .replace(/^dist\//, 'src/')
    .replace(/\.[cm]?js$/, '.ts');
  if (!existsSync(join(root, source))) {
    console.error(
      `check-cycles: package.json imports target ${target} has no source file (looked for ${source})`,
    );
    process.exit(2);
  }
  return source;
}

/** Every condition named in "imports", at its top level ("node", "workerd", "default" ...). */
const conditions = [
  ...new Set(Object.values(imports).flatMap((v) => (v && typeof v === 'object' ? Object.keys(v) : []))),
];
if (conditions.length === 0) conditions.push('default');

/** The specifier's source file under `condition`, or undefined when it is no key of "imports". */
function resolveImport(specifier, condition) {
  for (const [key, value] of Object.entries(imports)) {
    const star = key.indexOf('*');
    let target;
    if (star < 0) {
      if (key === specifier) target = targetOf(value, condition);
    } else if (specifier.startsWith(key.slice(0, star)) && specifier.endsWith(key.slice(star + 1))) {
      const part = specifier.slice(star, specifier.length - (key.length - star - 1));
      target = targetOf(value, condition)?.replaceAll('*', part);
    }
    if (target) return sourceOf(target);
  }
  return undefined;
}

// madge's graph of src/, keys relative to the root; nothing outside src/ is followed (a package import
// that madge resolved into dist/ is left out here and drawn below, for each condition).
const base = await madge(srcDir, {
  baseDir: root,
  fileExtensions: ['ts'],
  dependencyFilter: (file) => resolve(file).startsWith(srcDir + sep),
});
const graph = base.obj();

// Each file's package imports (`#...`), from TypeScript's own reading of its import lines.
const packageImports = new Map();
for (const file of Object.keys(graph)) {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
  const specifiers = importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('#'));
  if (specifiers.length > 0) packageImports.set(file, specifiers);
}

// One graph per distinct way the conditions resolve the package imports.
const worlds = new Map();
for (const condition of conditions) {
  const tree = {};
  const picked = [];
  for (const [file, deps] of Object.entries(graph)) {
    const extra = (packageImports.get(file) ?? []).flatMap((specifier) => {
      const source = resolveImport(specifier, condition);
      if (source) picked.push(`${specifier}=${source}`);
      return source ? [source] : [];
    });
    tree[file] = [...new Set([...deps.filter((dep) => dep in graph), ...extra])];
  }
  const key = [...new Set(picked)].sort().join(' ');
  if (worlds.has(key)) worlds.get(key).conditions.push(condition);
  else worlds.set(key, { conditions: [condition], tree });
}

let found = 0;
for (const { conditions: named, tree } of worlds.values()) {
  for (const cycle of (await madge(tree, { baseDir: root })).circular()) {
    found++;
    console.error(`import cycle (conditions: ${named.join(', ')}): ${[...cycle, cycle[0]].join(' -> ')}`);
  }
}
const files = Object.keys(graph).length;
const where = relative(process.cwd(), srcDir) || '.';
if (found > 0) {
  console.error(`check-cycles: ${found} import cycle(s) in ${where} (${files} files)`);
  process.exit(1);
}
console.log(
  `check-cycles: no import cycle in ${where} (${files} files; package imports followed under ${conditions.join(', ')})`,
);
