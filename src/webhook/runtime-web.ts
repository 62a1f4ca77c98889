/**
 * How webhook bodies are read off Node (Bun, Deno, Workers, edge runtimes, browsers; package.json
 * `imports`: `#webhook-runtime`): no `node:zlib`, and events read with the fast path, as a server reads
 * event after event. A bundle for workerd takes `runtime-workerd.ts`, without the fast path.
 */
import { type Decoder, UNSUPPORTED } from './encoding.js';
import { webhookFastPath as fastPath } from './fast-path.js';

/** No `node:zlib` here: `DecompressionStream` covers gzip and deflate; br is refused off Node. */
export const decodeWithZlib: Decoder = async () => UNSUPPORTED;

/** The fast path, as a server reads event after event (`undefined` on workerd). */
export const webhookFastPath: typeof fastPath | undefined = fastPath;
