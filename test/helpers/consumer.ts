/**
 * Consumer projects for the package test: folders of their own (package.json, tsconfig, sources) inside
 * an app that installed the packed tarball, resolving the package as an installed dependency.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * Loads one entry (`node probe.cjs ENTRY require|import`) and prints its export names and every timer,
 * socket or other handle created while it loaded, unref'd ones included (an async hook sees them all).
 * The process's own stdio streams do not count: a peer (msw) opens stderr.
 */
export const PROBE = `const { createHook } = require('node:async_hooks');
const { writeSync } = require('node:fs');
const [entry, how] = process.argv.slice(2);
const KINDS = /Timeout|Immediate|TCP|PIPE|TTY|UDP|TLS|HTTP|DNS|GETADDRINFO|WORKER|MESSAGEPORT|SIGNAL|PROCESS|FSEVENT|STATWATCHER/;
const created = [];
const hook = createHook({ init(id, type, trigger, resource) { if (KINDS.test(type)) created.push({ type, resource }); } }).enable();
const loaded = how === 'require' ? Promise.resolve(require(entry)) : import(entry);
loaded.then((m) => {
  hook.disable();
  const stdio = [process.stdin, process.stdout, process.stderr].map((stream) => stream._handle);
  const own = created.filter(({ resource }) => !stdio.includes(resource)).map(({ type }) => type);
  writeSync(1, JSON.stringify({ keys: Object.keys(m).filter((k) => k !== 'default').sort(), created: own }));
});
`;

/** Runs node in `cwd`, bounded. */
export function node(args: string[], cwd: string) {
  return run(process.execPath, args, { cwd, timeout: 30_000 });
}

/** A consumer project: its package.json (module type), and its files (a tsconfig among them). */
export async function project(
  parent: string,
  name: string,
  type: 'module' | 'commonjs',
  files: Record<string, string>,
): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type }));
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  return dir;
}

/**
 * The strictest settings a TypeScript user may have, the package's own types checked too
 * (`skipLibCheck: false`), for `index.ts` compiled to `out/`.
 */
export function strictTsconfig(compilerOptions: Record<string, unknown>): string {
  return JSON.stringify({
    compilerOptions: {
      target: 'es2022',
      strict: true,
      exactOptionalPropertyTypes: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: false,
      types: ['node'],
      outDir: 'out',
      ...compilerOptions,
    },
    include: ['index.ts'],
  });
}

/**
 * Type-checks and compiles the project in `dir` with the repository's TypeScript (or the `tsc` given);
 * fails with tsc's output.
 */
export async function compile(dir: string, compiler = tsc): Promise<void> {
  await run(process.execPath, [compiler, '-p', 'tsconfig.json'], { cwd: dir, timeout: 60_000 }).catch(
    (error: { stdout?: string }) => {
      throw new Error(`tsc failed in ${dir}:\n${error.stdout ?? String(error)}`);
    },
  );
}
