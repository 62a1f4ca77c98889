/**
 * Files off Node, through the runtime's own globals (no import): `Bun.file` on Bun, `Deno.stat` and
 * `Deno.open` on Deno. A runtime with neither (a Worker, an edge function) has no file system: a path
 * is refused before anything is sent.
 */
import type { OpenSource } from './chunks.js';
import { readerSource } from './chunks.js';
import { detectWeb } from './signatures.js';
import { readWebSample } from './sniff.js';
import { baseName, blobSource, FileInputProblem, fileUrlOf, HEAD_BYTES, type Source } from './source-base.js';

interface BunGlobal {
  file(path: string | URL): Blob & { exists(): Promise<boolean> };
}

interface DenoFile {
  readable: ReadableStream<Uint8Array>;
  close(): void;
}

interface DenoGlobal {
  stat(path: string | URL): Promise<{ isFile: boolean; isDirectory: boolean; size: number }>;
  open(path: string | URL): Promise<DenoFile>;
  readFile(path: string | URL): Promise<Uint8Array>;
  errors: { NotFound: new (...args: never[]) => Error; PermissionDenied: new (...args: never[]) => Error };
}

const runtime = globalThis as { Bun?: BunGlobal; Deno?: DenoGlobal };

/** The path a string or `file:` URL names, for messages and the default file name. */
function pathText(data: string | URL): string {
  const url = fileUrlOf(data);
  return url ? decodeURIComponent(url.pathname) : (data as string);
}

/** A path on Bun or Deno; elsewhere a refusal that says what to pass instead. */
export async function webPathSource(data: string | URL): Promise<Source> {
  const path = pathText(data);
  const name = baseName(path);
  if (runtime.Bun) return bunPathSource(runtime.Bun, path, name);
  if (runtime.Deno) return denoPathSource(runtime.Deno, path, name);
  throw noFileSystem(name);
}

/**
 * A path where the runtime is known to have no file system (workerd): the refusal {@link webPathSource}
 * gives there, without the code that reads files on Bun and Deno.
 */
export async function filelessPathSource(data: string | URL): Promise<Source> {
  throw noFileSystem(baseName(pathText(data)));
}

function noFileSystem(name: string): FileInputProblem {
  return new FileInputProblem(
    `${name} cannot be read: this runtime has no file system; pass the file's bytes, a Blob or a stream`,
  );
}

async function bunPathSource(bun: BunGlobal, path: string, name: string): Promise<Source> {
  const file = bun.file(path);
  if (!(await file.exists())) {
    throw new FileInputProblem(`${name} was not found (no file at ${path})`);
  }
  // A BunFile is a Blob read lazily from disk: the Blob source reads it as it goes out.
  return { ...blobSource(file, detectWeb), label: name, name, declaredType: undefined };
}

async function denoPathSource(deno: DenoGlobal, path: string, name: string): Promise<Source> {
  const problem = (error: unknown) => {
    if (error instanceof deno.errors.NotFound) {
      return new FileInputProblem(`${name} was not found (no file at ${path})`, ['file'], { cause: error });
    }
    const reason =
      error instanceof deno.errors.PermissionDenied ? 'permission denied' : (error as Error).message;
    return new FileInputProblem(`${name} cannot be read (${reason})`, ['file'], { cause: error });
  };
  const guard = <T>(read: () => Promise<T>) =>
    read().catch((error: unknown) => {
      throw problem(error);
    });
  const stats = await guard(() => deno.stat(path));
  if (!stats.isFile) {
    throw new FileInputProblem(
      `${name} is not a file (${stats.isDirectory ? 'a directory' : 'not a regular file'})`,
    );
  }
  const size = stats.size;
  /** The first bytes of the file, read with the same look past an ID3 tag as a stream's. */
  const sample = () =>
    guard(async () => {
      const reader = (await deno.open(path)).readable.getReader();
      try {
        return (await readWebSample(reader)).head;
      } finally {
        reader.cancel().catch(() => {});
      }
    });
  return {
    label: name,
    name,
    declaredType: undefined,
    size,
    replayable: true,
    detect: async () => detectWeb(await sample()),
    head: async () => (await sample()).subarray(0, HEAD_BYTES),
    open: () => lazyFile(deno, path),
    // Deno has no Blob backed by a file: the file is read into memory (it is within the limit).
    blob: () => guard(async () => new Blob([(await deno.readFile(path)) as Uint8Array<ArrayBuffer>])),
    discard: () => {},
  };
}

/** A Deno file opened on the first read. */
function lazyFile(deno: DenoGlobal, path: string): OpenSource {
  const opened = deno.open(path).then((file) => readerSource(file.readable.getReader()));
  opened.catch(() => {});
  return {
    next: async () => (await opened).next(),
    close: () => {
      opened.then(
        (source) => source.close(),
        () => {},
      );
    },
  };
}
