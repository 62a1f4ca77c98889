import { readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { defineConfig, type Options } from 'tsup';
import ts from 'typescript';
import { buildInboxScript } from './src/testing/inbox/build-script.js';

const MISSING_MSW =
  'oa-messaging/testing/msw needs the msw package (2.x), an optional peer dependency: npm install --save-dev msw';

/**
 * `require('oa-messaging/testing/msw')` without msw (an optional peer) says what to install, as
 * `oa-messaging/redis` does for ioredis, instead of a bare "Cannot find module 'msw'". The check goes
 * first in the CommonJS file: a bundler hoists every `require` of an external package above the
 * module's own code, so it cannot be written in the source. (An ES module import of it fails at link
 * time with Node's own message naming 'msw'.)
 */
async function checkMswFirst(): Promise<void> {
  const file = 'dist/testing/msw.cjs';
  const text = await readFile(file, 'utf8');
  if (text.includes(MISSING_MSW)) return;
  const check =
    "try { require.resolve('msw'); } catch (cause) { " +
    `throw new (require('../index.cjs').OAConfigError)(${JSON.stringify(MISSING_MSW)}, { cause }); }\n`;
  await writeFile(file, text.replace("'use strict';\n", `'use strict';\n${check}`));
}

/** The folder of each package whose code esbuild put into `files` (it marks each module it bundles with its path). */
async function bundledPackages(files: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const file of files) {
    for (const [, dir] of (await readFile(file, 'utf8')).matchAll(
      /^\/\/ (\S*node_modules\/(?:@[^/\s]+\/)?[^/\s]+)\//gm,
    )) {
      found.add(dir as string);
    }
  }
  return [...found];
}

/**
 * THIRD-PARTY-NOTICES.md in `folder`: the name, version and license files (every LICENSE, LICENCE and
 * NOTICE file) of each package whose code the build bundled into the files below it, as their licenses
 * ask of a copy of their code. `bundled` are the packages the build was told to bundle: each must be
 * found (a build whose output lost esbuild's path comments, e.g. a minified one, fails here rather than
 * writing an empty list). `skip` names subfolders of `folder` built on their own.
 */
async function writeNotices(folder: string, bundled: readonly string[], skip: readonly string[] = []) {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!(dir === folder && skip.includes(entry.name))) await walk(path);
      } else if (/\.c?js$/.test(entry.name)) files.push(path);
    }
  };
  await walk(folder);
  const packages: { name: string; section: string }[] = [];
  for (const dir of await bundledPackages(files)) {
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      license?: unknown;
    };
    const texts: string[] = [];
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.isFile() && /^(licen[cs]e|notice)/i.test(entry.name)) {
        texts.push((await readFile(join(dir, entry.name), 'utf8')).trim());
      }
    }
    if (texts.length === 0) {
      throw new Error(`${manifest.name} is bundled into ${folder} but has no license file to copy`);
    }
    const license = typeof manifest.license === 'string' ? manifest.license : 'see below';
    packages.push({
      name: manifest.name,
      section: `## ${manifest.name} ${manifest.version} (${license})\n\n${texts.join('\n\n')}\n`,
    });
  }
  const missing = bundled.filter((name) => !packages.some((p) => p.name === name));
  if (missing.length > 0) throw new Error(`no code of ${missing.join(', ')} found in ${folder}'s output`);
  packages.sort((a, b) => (a.name < b.name ? -1 : 1));
  await writeFile(
    join(folder, 'THIRD-PARTY-NOTICES.md'),
    `# Third-party notices\n\nThe files in this folder contain code of the packages below, bundled into them when oa-messaging\nwas built. Their licenses follow.\n\n${packages.map((p) => p.section).join('\n')}`,
  );
}

/** The examples `oa example NAME` writes: those that run with the package alone (and, for campaign, Redis). */
export const EXAMPLES = ['quickstart', 'webhook-receiver', 'accounts', 'campaign', 'support-bot'];
const BLANK = '//__blank_line__';

/**
 * The examples as plain ES modules (dist/examples/*.mjs), for `oa example` to write into a user's
 * folder: they run with `node`, with no TypeScript tooling, in a CommonJS project too. TypeScript's own
 * transpiler keeps the comments, which are half of an example; blank lines are marked so that they stay.
 */
async function writeExamples(): Promise<void> {
  const sources = [
    ...EXAMPLES.map((name) => `${name}.ts`),
    ...(await readdir('examples/support')).map((file) => `support/${file}`),
  ];
  await mkdir('dist/examples/support', { recursive: true });
  for (const source of sources) {
    const text = (await readFile(`examples/${source}`, 'utf8')).replace(/^$/gm, BLANK);
    const { outputText } = ts.transpileModule(text, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    });
    const js = outputText
      .replaceAll(BLANK, '')
      .replace(/^[ \t]+$/gm, '')
      // A relative import names the .mjs file; the way to run it is node.
      .replace(/(from\s+['"]\.{1,2}\/[^'"]+)\.js(['"])/g, '$1.mjs$2')
      .replace(/npx tsx examples\/([\w-]+)\.ts/g, 'node $1.mjs');
    await writeFile(`dist/examples/${source.replace(/\.ts$/, '.mjs')}`, js);
  }
}

/** A value of package.json `imports`: a target, or targets by condition (and by `import`/`require`). */
type ImportTarget = string | { [condition: string]: ImportTarget };

/**
 * What differs by runtime (package.json `imports`: `#core-runtime`, `#webhook-runtime` ...): each
 * alias's targets, by condition, as the source files they are built from (`./dist/a/b.js` is
 * `src/a/b.ts`).
 */
const RUNTIME_IMPORTS = Object.entries(
  (JSON.parse(readFileSync('package.json', 'utf8')) as { imports: Record<string, ImportTarget> }).imports,
).map(([alias, target]) => {
  const sources = new Map<string, string>();
  const walk = (value: ImportTarget, condition: string): void => {
    if (typeof value === 'string') {
      if (!sources.has(condition))
        sources.set(condition, value.replace(/^\.\/dist\//, 'src/').replace(/\.c?js$/, '.ts'));
      return;
    }
    for (const [key, inner] of Object.entries(value))
      walk(inner, key === 'import' || key === 'require' ? condition : key);
  };
  walk(target, 'default');
  return { alias, sources };
});

/** Each runtime file, as an entry of the library's build: `core/runtime-node` -> `src/core/runtime-node.ts`. */
const RUNTIME_ENTRIES = Object.fromEntries(
  RUNTIME_IMPORTS.flatMap(({ sources }) => [...sources.values()]).map((source) => [
    source.replace(/^src\//, '').replace(/\.ts$/, ''),
    source,
  ]),
);

/** The runtime aliases as Node's source files, for a build that bundles them (the CLI). */
const nodeRuntime: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'node-runtime',
  setup(build) {
    for (const { alias, sources } of RUNTIME_IMPORTS) {
      const source = sources.get('node');
      if (!source) throw new Error(`package.json imports ${alias} has no node target`);
      build.onResolve({ filter: new RegExp(`^${alias}$`) }, () => ({ path: resolve(source) }));
    }
  },
};

/**
 * The web inbox's page script (src/testing/inbox/page), built for the browser once here and put into
 * the bundle as text in place of src/testing/inbox/script.ts, which builds it from source.
 */
const inboxScript: NonNullable<Options['esbuildPlugins']>[number] = {
  name: 'inbox-script',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]testing[\\/]inbox[\\/]script\.ts$/ }, () => ({
      contents: `export const INBOX_SCRIPT = ${JSON.stringify(buildInboxScript())};\n`,
      loader: 'js',
    }));
  },
};

/** The package's entry points (package.json `exports`): the only ones with types. */
const PUBLIC_ENTRIES = {
  index: 'src/index.ts',
  'webhook/index': 'src/webhook/index.ts',
  'testing/index': 'src/testing/index.ts',
  'testing/msw': 'src/testing/msw.ts',
  'redis/index': 'src/redis/index.ts',
  'queue/index': 'src/queue/index.ts',
  'bot/index': 'src/bot/index.ts',
};

/** The packages whose code the library's build carries (see `noExternal` below). */
const LIBRARY_BUNDLED = ['zod'];

/** The library: ESM and CommonJS with types, one chunk graph for its entry points. */
export const library: Options = {
  name: 'library',
  entry: {
    ...PUBLIC_ENTRIES,
    // What differs by runtime, chosen by the package's runtime imports (package.json `imports`): kept
    // external, so each runtime loads only its own, and built here so that all share the chunks (one
    // copy of the error classes).
    ...RUNTIME_ENTRIES,
  },
  external: RUNTIME_IMPORTS.map(({ alias }) => alias),
  // zod's code goes into the chunks, tree-shaken: zod/mini's own entry loads about ninety files (its
  // every locale among them), 45-50 ms of a cold start, where the schemas need a few. zod stays a
  // dependency for the types, and an app's own zod works with the exported schemas (zod's instanceof
  // goes by traits, and its global config and registry are shared through globalThis).
  noExternal: LIBRARY_BUNDLED,
  format: ['esm', 'cjs'],
  // Not the runtime files': their types name the internals of each runtime (the optional
  // @opentelemetry/api's among them), which the public types must not import.
  dts: { entry: PUBLIC_ENTRIES },
  // Not shipped: they were two thirds of the tarball, and the .js files are readable as they are.
  sourcemap: false,
  // The CLI build writes dist/cli at the same time: cleaning it here could delete its fresh output.
  clean: ['!cli/**'],
  target: 'node20',
  splitting: true,
  treeshake: true,
  esbuildPlugins: [inboxScript],
  onSuccess: async () => {
    await checkMswFirst();
    await writeNotices('dist', LIBRARY_BUNDLED, ['cli', 'examples']);
  },
};

/**
 * The command line's own libraries: bundled into the `oa` build and kept in devDependencies, so that a
 * library user's install holds only the SDK's dependencies.
 */
export const CLI_LIBRARIES = ['commander', 'cli-progress'];

/** What the `oa` build carries: its own libraries, and zod, as the library does (one file to load, not ninety). */
const CLI_BUNDLED = [...CLI_LIBRARIES, ...LIBRARY_BUNDLED];

/**
 * The `oa` command: one ESM file with the shebang (a banner applies to every file of a build, so the
 * CLI is a build of its own). No splitting, so a rebuild leaves no stale chunk behind in dist/cli.
 * cli-progress is CommonJS and requires Node's builtins: the banner gives the bundle a `require`.
 */
export const cli: Options = {
  name: 'cli',
  entry: { 'cli/index': 'src/cli/index.ts' },
  format: ['esm'],
  dts: false,
  sourcemap: false,
  noExternal: CLI_BUNDLED,
  clean: false,
  target: 'node20',
  splitting: false,
  treeshake: true,
  onSuccess: async () => {
    await writeExamples();
    await writeNotices('dist/cli', CLI_BUNDLED);
  },
  // One file for Node: its runtime files are bundled in, not resolved through the package's `imports`.
  esbuildPlugins: [nodeRuntime, inboxScript],
  banner: {
    js: [
      '#!/usr/bin/env node',
      "import { createRequire as __oaCreateRequire } from 'node:module';",
      'const require = __oaCreateRequire(import.meta.url);',
    ].join('\n'),
  },
};

export default defineConfig([library, cli]);
