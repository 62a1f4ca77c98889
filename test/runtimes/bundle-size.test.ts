/**
 * The size of a Worker on the package: a client that sends a text and a webhook receiver, bundled by
 * esbuild for workerd (neutral platform, the Worker conditions), minified: no error, at most 42 KB
 * gzipped. 36 KB until the upload reuse, the webhook handlers' drain and the deadline around every
 * read of a caller's stream came in (37.6 KB with them); 38.0 KB with the per-folder runtime files,
 * the public hooks and the one option checker; 39.7 KB with many accounts (a client's `account` and
 * `credentials` options, its context made on first need, and the webhook handlers' `accounts`), which
 * a Worker that uses none of them still carries; 41.1 KB with what is kept per OA, the bounded
 * credentials lookup, each account's share of the pool and the reply reserve in the limiter, which it
 * carries too (createAccounts is not dropped by the bundler). Issue 53 brings it back to 36 KB by
 * letting the bundler drop what a Worker does not call.
 */
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { APP, bundleWorker, distMissing } from './support.js';

const LIMIT_BYTES = 42 * 1024;

it.skipIf(distMissing() !== undefined)(
  'a Worker that sends a text and receives a webhook bundles to at most 42 KB gzipped',
  async () => {
    const code = await bundleWorker(fileURLToPath(new URL('size-worker.mjs', APP)), true);
    const gzipped = gzipSync(code).byteLength;
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    console.log(
      `Worker bundle: ${kb(Buffer.byteLength(code))} minified, ${kb(gzipped)} gzipped (limit ${kb(LIMIT_BYTES)})`,
    );
    expect(gzipped).toBeLessThanOrEqual(LIMIT_BYTES);
  },
);
