/**
 * The SHA-256 behind the reuse of uploads, off Node (`runtime-web.ts`, `runtime-workerd.ts`): the Web
 * Crypto digest, which takes its bytes whole, so the parts are kept until `digest()` (a file of up to
 * the upload's limit, once). No Node built-in here.
 */
import { concatBytes } from './chunks.js';

/** A SHA-256 in progress: parts in, then the hex digest (64 lowercase hex digits) once. */
export function sha256(): { update(bytes: Uint8Array): void; digest(): Promise<string> } {
  const parts: Uint8Array[] = [];
  let total = 0;
  return {
    update: (bytes) => {
      parts.push(bytes);
      total += bytes.byteLength;
    },
    digest: async () => {
      const bytes = parts.length === 1 ? (parts[0] as Uint8Array) : concatBytes(parts, total);
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
      return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
    },
  };
}
