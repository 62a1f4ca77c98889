/**
 * How webhook bodies are read on Cloudflare's workerd (the `workerd` condition, which only workerd's
 * bundlers set): no `node:zlib`, and no fast path: a Worker reads one event per request, each field
 * judged by its schema, to the same result, and the fast path's code is left out of the bundle.
 */
import { type Decoder, UNSUPPORTED } from './encoding.js';
import type { webhookFastPath as fastPath } from './fast-path.js';

/** No `node:zlib` here: `DecompressionStream` covers gzip and deflate; br is refused off Node. */
export const decodeWithZlib: Decoder = async () => UNSUPPORTED;

/** None on workerd: every field is judged by its schema. */
export const webhookFastPath: typeof fastPath | undefined = undefined;
