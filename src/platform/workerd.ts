/**
 * The platform on Cloudflare's workerd (the `workerd` condition, which only workerd's bundlers set):
 * the web platform without what only Bun and Deno use (their files, Deno's connections), which on
 * workerd could never run: a path is refused as the web platform refuses it where there is no file
 * system, and sends go on the global `fetch` as they do there. Webhooks are read without the fast path,
 * and `user_ids` lists are checked for repeats with a Set.
 */
import { filelessPathSource } from '../uploads/web-files.js';
import type { Platform } from './types.js';
import { webPlatform } from './web-base.js';

export const platform: Platform = webPlatform({
  pathSource: filelessPathSource,
  transportOptions: () => ({}),
  // Each field judged by its schema, to the same result: the fast path's code is left out of the bundle.
  webhookFastPath: undefined,
  // The same answer as the hashed check, slower on a long list: its code is left out of the bundle.
  allDistinct: (ids) => new Set(ids).size === ids.length,
});
