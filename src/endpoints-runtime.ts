/**
 * The repeat check of a `user_ids` list the endpoint table gives the broadcast schema, on Node, Bun and
 * Deno (package.json `imports`: `#endpoints-runtime`): hashed in typed tables, about twice as fast as a
 * Set on a long list.
 */
export { allDistinct } from './schemas/all-distinct.js';
