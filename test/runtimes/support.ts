/**
 * The runtime suites' side in Node: where the runtimes' binaries are (npm packages bun, deno and
 * workerd), how a program is started in each and stopped, and the Worker bundle and workerd config.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build } from 'esbuild';
import { freePort } from '../helpers/ports.js';
import { collectOutput } from '../helpers/run-script.js';

export type Runtime = 'bun' | 'deno' | 'workerd';

/** The repository's root: the package `oa-messaging` (its `dist`), which the scenarios import by name. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const APP = new URL('./app/', import.meta.url);

/** The path of the runtime's binary from its npm package, or why there is none that runs. */
export function findRuntime(runtime: Runtime): { bin: string } | { missing: string } {
  const bin = join(ROOT, 'node_modules', '.bin', runtime);
  if (!existsSync(bin))
    return { missing: `${runtime} is not installed (npm package ${runtime}): run npm ci` };
  const probe = spawnSync(bin, ['--version'], { timeout: 20_000, encoding: 'utf8' });
  if (probe.status !== 0) {
    return { missing: `${bin} --version failed: ${probe.error?.message ?? probe.stderr.trim()}` };
  }
  return { bin };
}

/** Whether the package is built: the scenarios import `dist`, as a user of the package would. */
export function distMissing(): string | undefined {
  return existsSync(join(ROOT, 'dist', 'index.js')) && existsSync(join(ROOT, 'dist', 'webhook', 'index.js'))
    ? undefined
    : 'dist is missing: run npm run build before npm run test:runtimes';
}

/** A program running in a runtime and serving HTTP on loopback. */
export interface Served {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Ends the child (SIGKILL after 2 s) and resolves once it has exited. */
async function stopChild(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(killer);
}

/**
 * Spawns `bin args` and waits, at most `withinMs`, until `ready(output)` gives the URL it serves; a
 * child that exits first, or is still not ready then, is stopped and fails the wait with its output.
 */
export async function serveChild(
  bin: string,
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; withinMs?: number },
  ready: (output: string) => string | undefined | Promise<string | undefined>,
): Promise<Served> {
  const child = spawn(bin, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: 'pipe',
  });
  const output = collectOutput(child);
  const stop = () => stopChild(child);
  const deadline = Date.now() + (options.withinMs ?? 20_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${bin} ${args.join(' ')} exited (${child.exitCode ?? child.signalCode}):\n${output()}`,
      );
    }
    const url = await ready(output());
    if (url !== undefined) return { url, output, stop };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stop();
  throw new Error(
    `${bin} ${args.join(' ')} was not serving after ${options.withinMs ?? 20_000} ms:\n${output()}`,
  );
}

/** The port a program printed as `listening PORT`, as a URL. */
export function announcedUrl(output: string): string | undefined {
  const port = /listening (\d+)/.exec(output)?.[1];
  return port === undefined ? undefined : `http://127.0.0.1:${port}`;
}

/**
 * An empty tsconfig for Bun: Bun applies the nearest tsconfig.json's `paths`, and the repository's
 * point `oa-messaging` at src; the scenarios must import the built package, as a user's would.
 */
const BUN_TSCONFIG = fileURLToPath(new URL('./empty-tsconfig.json', import.meta.url));

/** The arguments that run an ESM file in Bun or Deno (Deno against the local node_modules). */
export function runArgs(runtime: 'bun' | 'deno', file: string): string[] {
  return runtime === 'bun'
    ? ['run', `--tsconfig-override=${BUN_TSCONFIG}`, file]
    : ['run', '-A', '--node-modules-dir=manual', file];
}

/** The esbuild options of a Worker bundle (the issue's: neutral platform, the Worker conditions). */
export const WORKER_BUILD: BuildOptions = {
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  conditions: ['workerd', 'worker', 'browser'],
  mainFields: ['module', 'main'],
  absWorkingDir: ROOT,
  // Not the repository's tsconfig.json, whose `paths` point `oa-messaging` at src: the bundle takes the
  // built package, as a user's bundler does.
  tsconfigRaw: {},
  logLevel: 'silent',
};

/** Bundles `entry` into one ES module (a Worker), throwing esbuild's errors as they are. */
export async function bundleWorker(entry: string, minify = false): Promise<string> {
  const result = await build({ ...WORKER_BUILD, entryPoints: [entry], write: false, minify }).catch(
    (error: { errors?: { text: string; location: { file: string } | null }[] }) => {
      const errors = error.errors ?? [];
      const shown = errors.slice(0, 8).map((e) => `  ${e.location?.file ?? '?'}: ${e.text}`);
      throw new Error(`esbuild: ${errors.length} errors bundling ${entry} for workerd:\n${shown.join('\n')}`);
    },
  );
  const file = result.outputFiles?.[0];
  if (!file) throw new Error(`esbuild wrote nothing for ${entry}`);
  return file.text;
}

const capnpString = (value: string) => JSON.stringify(value);

/**
 * The workerd config of one Worker: its module, its text bindings, and a network service that lets it
 * reach servers on loopback (`globalOutbound`), served on `port`.
 */
export function workerdConfig(
  port: number,
  bindings: Record<string, string>,
  stores: StoreBinding[] = [],
): string {
  const texts = [
    ...Object.entries(bindings).map(
      ([name, text]) => `(name = ${capnpString(name)}, text = ${capnpString(text)})`,
    ),
    ...stores.map(
      ({ name, kind }) =>
        `(name = ${capnpString(name)}, ${kind === 'kv' ? 'kvNamespace' : 'queue'} = "store")`,
    ),
  ].join(',\n    ');
  return `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "main", worker = .worker),
    (name = "net", network = (allow = ["public", "private", "local"])),
    (name = "store", worker = .store),
  ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);

const worker :Workerd.Worker = (
  modules = [ (name = "worker.js", esModule = embed "worker.js") ],
  compatibilityDate = "2026-01-01",
  bindings = [
    ${texts}
  ],
  globalOutbound = "net",
);

const store :Workerd.Worker = (
  modules = [ (name = "store.js", esModule = embed "store.js") ],
  compatibilityDate = "2026-01-01",
);
`;
}

/** A KV namespace or a queue a Worker recipe stores its events in, bound to an in-memory service. */
export interface StoreBinding {
  name: string;
  kind: 'kv' | 'queue';
}

/**
 * The service behind the store bindings: workerd turns a KV namespace's get/put/delete into GET, PUT
 * and DELETE of the key's path, and a queue's send into a POST; kept in memory.
 */
const STORE_SERVICE = `const entries = new Map();
export default {
  async fetch(request) {
    const key = decodeURIComponent(new URL(request.url).pathname.slice(1));
    const body = await request.arrayBuffer();
    if (request.method === 'GET') return entries.has(key) ? new Response(entries.get(key)) : new Response(null, { status: 404 });
    if (request.method === 'PUT') entries.set(key, body);
    if (request.method === 'DELETE') entries.delete(key);
    return new Response(null);
  },
};
`;

/** Answers `GET url/ready` at all (below 500): the Worker is up. */
async function answersReady(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(1000) });
    await response.body?.cancel();
    // Any answer: the Worker is up (a recipe has no /ready and may answer 404 or 405).
    return response.status < 500;
  } catch {
    return false;
  }
}

/**
 * Serves a Worker module (already bundled) in workerd with the given text bindings: writes it and its
 * config to a temporary folder, runs `workerd serve`, and waits until it answers `/ready`.
 */
export async function serveWorker(
  bin: string,
  code: string,
  bindings: Record<string, string>,
  stores: StoreBinding[] = [],
): Promise<Served> {
  const dir = await mkdtemp(join(tmpdir(), 'oa-workerd-'));
  const port = await freePort();
  await writeFile(join(dir, 'worker.js'), code);
  await writeFile(join(dir, 'store.js'), STORE_SERVICE);
  await writeFile(join(dir, 'config.capnp'), workerdConfig(port, bindings, stores));
  const url = `http://127.0.0.1:${port}`;
  try {
    const served = await serveChild(
      bin,
      ['serve', 'config.capnp'],
      { cwd: dir, withinMs: 20_000 },
      async () => ((await answersReady(url)) ? url : undefined),
    );
    return {
      ...served,
      stop: async () => {
        await served.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** POSTs JSON to the runtime and returns its JSON answer (bounded by `withinMs`). */
export async function postJson<T = unknown>(url: string, body: unknown, withinMs = 15_000): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(withinMs),
  });
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${url} answered ${response.status}: ${text.slice(0, 500)}`);
  }
}
