/**
 * The SHA-256 behind the reuse of uploads, on Node (package.json `imports`: `#video-runtime` under the
 * `node` condition): `node:crypto`, fed as the parts come, so a file is hashed without holding it.
 * `node:crypto` is taken with the first hash, not at import: loading it costs a few milliseconds of
 * the package's cold import, for a capability only uploads use.
 */

/** A SHA-256 in progress: parts in, then the hex digest (64 lowercase hex digits) once. */
export function sha256(): { update(bytes: Uint8Array): void; digest(): Promise<string> } {
  const hash = process.getBuiltinModule('node:crypto').createHash('sha256');
  return {
    update: (bytes) => {
      hash.update(bytes);
    },
    digest: async () => hash.digest('hex'),
  };
}
