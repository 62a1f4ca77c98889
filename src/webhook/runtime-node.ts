/**
 * How webhook bodies are read on Node (package.json `imports`: `#webhook-runtime` under the `node`
 * condition): encoded bodies decoded with `node:zlib` (br among them), and events read with the fast path.
 */
import { webhookFastPath as fastPath } from './fast-path.js';

export { decodeWithZlib } from './zlib-decoder.js';

/** The fast path, as a server reads event after event (`undefined` on workerd). */
export const webhookFastPath: typeof fastPath | undefined = fastPath;
