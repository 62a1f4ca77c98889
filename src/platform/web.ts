/**
 * The platform off Node (Bun, Deno, Cloudflare Workers, edge runtimes, browsers): the global `fetch`,
 * the runtime's `FormData`, files through `Bun.file` or `Deno`, and no Node built-in at all, so that a
 * Worker bundler has nothing to resolve that the runtime lacks.
 */
import { FetchTransport, globalFetch } from '../core/fetch-transport.js';
import { OAConfigError } from '../errors.js';
import { detectWeb } from '../uploads/signatures.js';
import { webPathSource } from '../uploads/web-files.js';
import type { Platform } from './types.js';

const runtime = globalThis as {
  Bun?: { version: string };
  Deno?: { version: { deno: string } };
  EdgeRuntime?: string;
  navigator?: { userAgent?: string };
};

function runtimeName(): string {
  if (runtime.Bun) return `bun/${runtime.Bun.version}`;
  if (runtime.Deno) return `deno/${runtime.Deno.version.deno}`;
  if (runtime.navigator?.userAgent === 'Cloudflare-Workers') return 'workerd';
  if (typeof runtime.EdgeRuntime === 'string') return runtime.EdgeRuntime;
  return 'web';
}

export const platform: Platform = {
  runtime: runtimeName,
  defaultTransport: (dispatcher) => {
    if (dispatcher !== undefined) {
      throw new OAConfigError(
        'dispatcher is an undici Dispatcher, which this runtime does not send with: pass fetch instead',
      );
    }
    return new FetchTransport(globalFetch());
  },
  pathSource: webPathSource,
  // Only Node's fs.ReadStream names its file; Bun's copy of it is not worth a file system call here.
  fileOfStream: async () => undefined,
  // file-type's tokenizer pulls Node-only packages into a Worker bundle.
  detect: detectWeb,
  // No synchronous loader off Node: tracing needs Node (or Bun through the Node entry).
  requireOpenTelemetry: () => undefined,
  // DecompressionStream covers gzip and deflate; br is refused off Node.
  zlib: async () => undefined,
};
