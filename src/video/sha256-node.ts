/** SHA-256 on Node: `node:crypto`, fed as the parts come, so a file is hashed without holding it. */
import { createHash } from 'node:crypto';
import type { Sha256 } from '../platform/types.js';

export function nodeSha256(): Sha256 {
  const hash = createHash('sha256');
  return {
    update: (bytes) => {
      hash.update(bytes);
    },
    digest: async () => hash.digest('hex'),
  };
}
